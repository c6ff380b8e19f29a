import type { Job, Queue } from 'bullmq'

/** What the dead-letter queue holds for a job that will not be tried again: the job's data as queued, and why it ended. */
export interface DeadLetter {
  /** The job's data as it was queued: a `HandoffJob`, or whatever a job that is not one held. */
  job: unknown
  /** The job's id on its own queue. */
  jobId: string | undefined
  /** The name of the queue it came from. */
  queue: string
  /** The last error's message. */
  error: string
  /** The attempts made, this last one included. */
  attempts: number
  /** When it was dead-lettered, as an ISO 8601 time. */
  failedAt: string
}

/**
 * Puts a job that has run out of attempts (or can never succeed) on `deadLetter`, under the same
 * name and, where BullMQ allows it as an id, the same id: a worker that dies after this and before
 * the job is marked failed runs it again, and the second dead-letter is then the first one's copy.
 */
export async function deadLetterOf(deadLetter: Queue, job: Job, error: Error): Promise<void> {
  const letter: DeadLetter = {
    job: job.data,
    jobId: job.id,
    queue: job.queueName,
    error: error.message,
    attempts: job.attemptsMade + 1,
    failedAt: new Date().toISOString(),
  }
  const id = job.id !== undefined && !job.id.includes(':') && !/^\d+$/.test(job.id) ? job.id : undefined
  await deadLetter.add(job.name, letter, id === undefined ? {} : { jobId: id })
}
