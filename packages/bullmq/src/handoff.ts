import { randomUUID } from 'node:crypto'
import type { HandoffJob, HandoffOptions } from '@hookguard/core'
import { Job, type JobsOptions, type Queue } from 'bullmq'

/**
 * What `handoff()` sets on each job unless the queue's `defaultJobOptions` or `jobOptions` say
 * otherwise: five attempts, 1, 2, 4 and 8 s apart, and finished jobs kept by age. A kept job is
 * what makes a copy of its delivery a duplicate at the queue (its id is taken), so completed jobs
 * are kept as long as a dedupe store remembers a handled delivery by default (24 h) and failed
 * ones a week, for someone to look at; each kept job holds its payload and raw body in Redis.
 */
export const DEFAULT_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { age: 86_400 },
  removeOnFail: { age: 7 * 86_400, count: 10_000 },
} as const satisfies JobsOptions

/**
 * The job options a hand-off leaves to the user: not the id, which is the delivery's, nor what
 * would give one delivery a second job (`deduplication`, `repeat`) or tie it to another (`parent`).
 */
export type HandoffJobOptions = Omit<JobsOptions, 'jobId' | 'deduplication' | 'repeat' | 'parent' | 'repeatJobKey'>

/** The options of {@link handoff}: the core's `status` and `timeout`, and the jobs' BullMQ options. */
export interface BullmqHandoffOptions {
  /** The answer's status once the job is queued: a 2xx, default 202. */
  status?: number
  /** Milliseconds to wait for Redis before answering 503 `queue_unavailable`; default 5000. */
  timeout?: number
  /** Options for every job, over the queue's `defaultJobOptions` and {@link DEFAULT_JOB_OPTIONS}. */
  jobOptions?: HandoffJobOptions
}

/**
 * The field of a job's stored options that names the `enqueue` call that created it. BullMQ's
 * `add` answers the same id whether it created the job or found it there; the job it stores is
 * written once, by the call that created it, so reading this field back tells which one did.
 */
const ENQUEUED_BY = 'hookguardEnqueue'

/**
 * The receiver's `handoff` option over a BullMQ queue: a verified delivery becomes a job named by
 * its event (`HandoffJob.name`), whose id is the delivery's (`HandoffJob.id`), so that a copy
 * arriving while the job is kept adds no second job and is answered as a duplicate. The answer
 * waits until Redis has stored the job; a queue whose connection is not ready is refused at
 * once, so the service hears 503 `queue_unavailable` and delivers again later.
 *
 * @example
 * // queue: BullMQ's `new Queue('webhooks', { connection })`, over an ioredis connection made with
 * // `enableOfflineQueue: false`, so that a command sent while Redis is away fails at once.
 * app.post('/webhooks', webhook({ auth: { mode: 'secret', secret: process.env.WEBHOOK_SECRET! }, handoff: handoff(queue) }))
 */
export function handoff(queue: Queue, options: BullmqHandoffOptions = {}): HandoffOptions {
  const { status, timeout, jobOptions = {} } = options
  if (typeof (queue as Partial<Queue> | null)?.add !== 'function' || typeof queue.toKey !== 'function') {
    throw new TypeError('@hookguard/bullmq: handoff(queue) needs a BullMQ Queue')
  }
  if (typeof jobOptions !== 'object' || jobOptions === null) throw new TypeError('@hookguard/bullmq: handoff jobOptions must be an object')
  return {
    ...(status !== undefined && { status }),
    ...(timeout !== undefined && { timeout }),
    queue: {
      async enqueue(job: HandoffJob) {
        const client = await queue.getBackend().client
        // A command to a client that is not connected waits in its offline queue (or is retried)
        // for as long as Redis is away: refused here, the sender hears 503 now and retries.
        if (client.status !== 'ready') throw new Error(`@hookguard/bullmq: the queue's Redis connection is ${client.status}, not ready`)
        const call = randomUUID()
        const opts = { ...DEFAULT_JOB_OPTIONS, ...queue.defaultJobOptions, ...jobOptions, jobId: job.id, [ENQUEUED_BY]: call }
        // The read of who made the job leaves right behind its insert, on the same connection, so
        // Redis runs it after the insert with no round trip between: BullMQ writes the insert
        // before addJob returns (as its own addBulk relies on). A pipeline would do the same at
        // several times the cost: ioredis defines every BullMQ script again on each one.
        const adding = new Job(queue, job.name, job, opts, job.id).addJob(client)
        const [, stored] = await Promise.all([adding, client.hget(queue.toKey(job.id), 'opts')])
        // Gone already (finished and removed by the user's removeOnComplete): it was queued either way.
        return { jobId: job.id, duplicate: typeof stored === 'string' && enqueuedBy(stored) !== call }
      },
    },
  }
}

function enqueuedBy(stored: string): unknown {
  try {
    return (JSON.parse(stored) as Record<string, unknown>)[ENQUEUED_BY]
  } catch {
    return undefined
  }
}
