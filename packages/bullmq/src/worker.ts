import {
  type DedupeStore,
  DeliveryInProgressError,
  type HandoffJob,
  type QueuedDelivery,
  type RunOutcome,
  runOnce,
  type StandardSchemaV1,
  WebhookError,
} from '@hookguard/core'
import { DelayedError, type Job, type Queue, UnrecoverableError, Worker, type WorkerOptions } from 'bullmq'
import { deadLetterOf } from './dead-letter.ts'

/** Longest wait before a job whose delivery another holder claims is looked at again; no attempt is used. */
const IN_PROGRESS_RECHECK_MS = 1_000

/** A handed-off job as BullMQ carries it: the delivery as data, named by its event. */
export type HandoffBullJob<Payload = unknown, Result = unknown> = Job<HandoffJob<Payload>, RunOutcome<Result>>

/**
 * What runs each delivery: its payload typed by the schema's output, and the BullMQ job (for
 * `updateProgress`, `log`). The job's type is not inferred from: were it, a handler that names it
 * would lose its result's type (`unknown`).
 */
export type DeliveryHandler<Payload, Result> = (
  delivery: QueuedDelivery<Payload>,
  job: NoInfer<HandoffBullJob<Payload>>,
) => Result | Promise<Result>

/** The options of {@link createWorker}: BullMQ's own worker options, and how each delivery is run once. */
export interface HandoffWorkerOptions<Payload = unknown> extends WorkerOptions {
  /**
   * The receiver's dedupe store (`redisDedupeStore` of `@hookguard/redis`): a delivery whose job
   * runs again after its handler succeeded (a worker killed before BullMQ heard of it, a second
   * job of one delivery) is not run again. Without it a job that runs again runs the handler again.
   */
  store?: DedupeStore
  /** Checks (and types) each payload again; a payload it refuses is dead-lettered at once, never retried. */
  schema?: StandardSchemaV1<unknown, Payload>
  /** Seconds a handled delivery is remembered in `store`; default 86 400. */
  ttl?: number
  /**
   * Seconds the handler holds its claim in `store`; default 300. A worker that dies mid-job holds
   * it that long: the stalled job's next run waits (delayed, without using an attempt) until then.
   */
  processingTtl?: number
  /**
   * Where a job goes that will not be tried again: after its last attempt, or at once when it is no
   * hookguard job or its payload fails `schema`. It stays on its own queue too, as failed.
   */
  deadLetter?: Queue
}

/**
 * A BullMQ `Worker` that runs `handler` for each job a hand-off queued, once per delivery: through
 * the core's `runOnce`, with the queue's attempts and backoff for a handler that fails, a job
 * delayed (no attempt used) while another worker runs the same delivery, and the dead-letter
 * queue for what will not be tried again. The job's return value says whether the handler ran
 * (`{ ran: true, result }`) or the delivery had been handled already (`{ ran: false, reason: 'done' }`).
 *
 * @example
 * const worker = createWorker<{ event: string; data: { orderNo: string } }>(
 *   'webhooks',
 *   async (delivery, job) => {
 *     await job.updateProgress(50)
 *     console.log(delivery.payload.data.orderNo)
 *   },
 *   { connection, store, deadLetter },
 * )
 * worker.on('failed', (job, error) => console.error(job?.name, error.message))
 */
export function createWorker<Payload = unknown, Result = unknown>(
  queue: string | Queue,
  handler: DeliveryHandler<Payload, Result>,
  options: HandoffWorkerOptions<Payload>,
): Worker<HandoffJob<Payload>, RunOutcome<Result>> {
  const { store, schema, ttl, processingTtl, deadLetter, ...workerOptions } = options ?? ({} as HandoffWorkerOptions<Payload>)
  if (typeof handler !== 'function') throw new TypeError('@hookguard/bullmq: createWorker needs a handler function')
  for (const [name, value] of [
    ['ttl', ttl],
    ['processingTtl', processingTtl],
  ] as const) {
    if (value !== undefined && !(Number.isSafeInteger(value) && value > 0)) {
      throw new TypeError(`@hookguard/bullmq: createWorker ${name} must be a whole number of seconds, 1 or more`)
    }
  }
  const name = typeof queue === 'string' ? queue : queue.name
  const prefix = workerOptions.prefix ?? (typeof queue === 'string' ? undefined : queue.opts.prefix)
  const run = { ...(store && { store }), ...(schema && { schema }), ...(ttl && { ttl }), ...(processingTtl && { processingTtl }) }

  const processor = async (job: HandoffBullJob<Payload, Result>, token?: string): Promise<RunOutcome<Result>> => {
    let started = false
    try {
      return await runOnce(
        job.data,
        (delivery) => {
          started = true
          return handler(delivery, job)
        },
        run,
      )
    } catch (thrown) {
      if (thrown instanceof DeliveryInProgressError) {
        // Another worker runs it now (or died holding the claim): tried again once that run has
        // settled, without using one of the job's attempts, as a job that never ran.
        // Looked at again within a second, not only at the claim's expiry: a receiver's look at the
        // store (a copy arriving) holds it for moments, though for as long as `claimTimeout`.
        await job.moveToDelayed(Date.now() + Math.min(Math.max(thrown.retryAfterMs, 1), IN_PROGRESS_RECHECK_MS), token)
        throw new DelayedError()
      }
      const error = thrown instanceof Error ? thrown : new Error(String(thrown))
      if (!started && isPermanent(error)) {
        // Trying again cannot help: the job is no delivery, or its payload is one the schema refuses.
        await toDeadLetter(job, error)
        throw new UnrecoverableError(error.message)
      }
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) await toDeadLetter(job, error)
      throw error
    }
  }

  const toDeadLetter = async (job: Job, error: Error) => {
    if (deadLetter === undefined) return
    // A dead-letter that fails leaves the job failed on its own queue, where it is kept to be seen.
    await deadLetterOf(deadLetter, job, error).catch((cause: unknown) => {
      worker.emit('error', new Error('@hookguard/bullmq: a job could not be put on the dead-letter queue', { cause }))
    })
  }

  const worker = new Worker<HandoffJob<Payload>, RunOutcome<Result>>(name, processor, { ...workerOptions, ...(prefix && { prefix }) })
  return worker
}

/** A failure found before the handler ran that no retry changes: a payload the schema refuses, a job that is no delivery. */
function isPermanent(error: Error): boolean {
  return (error instanceof WebhookError && error.code === 'invalid_payload') || error instanceof TypeError
}
