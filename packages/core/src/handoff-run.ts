import type { WebhookMode } from './auth.ts'
import { fromBase64 } from './bytes.ts'
import { DEFAULT_DEDUPE_TTL, DEFAULT_PROCESSING_TTL } from './dedupe.ts'
import type { DedupeStore } from './dedupe-store.ts'
import { markDone } from './done-mark.ts'
import type { HandoffJob } from './handoff.ts'
import type { StandardSchemaV1 } from './standard-schema.ts'
import { validatePayload } from './standard-schema.ts'

/** A handed-off delivery as a worker's handler sees it. */
export interface QueuedDelivery<Payload = unknown> {
  /** The queue's id of the job (`HandoffJob.id`). */
  jobId: string
  /** The dedupe key it was queued under. */
  key: string
  mode: WebhookMode
  payload: Payload
  /** The bytes the receiver verified. */
  rawBody: Uint8Array
  fingerprint: string
  receivedAt: Date
  headers: Record<string, string>
}

/** How a worker runs each job: once per delivery with `store`, checked again by `schema`. */
export interface RunOnceOptions<Payload = unknown> {
  /**
   * The receiver's dedupe store (a shared one: Redis, a Durable Object). The handler runs under a
   * claim of the delivery's key; once it succeeds the key is remembered as done, so a job that runs
   * again (a worker killed after the work, before the queue heard of it; a second job of the same
   * delivery queued after the first was gone) does not run it a second time. Without a store a job
   * that runs again runs the handler again (the queue's at-least-once).
   */
  store?: DedupeStore
  /** Seconds a handled delivery is remembered; as `dedupe.ttl`, default 86 400. */
  ttl?: number
  /**
   * Seconds the handler holds its claim; as `dedupe.processingTtl`, default 300. A worker that dies
   * mid-job holds it that long: the queue's retry of the job waits until it expires. A done mark the
   * store fails after the handler succeeded is sent again until then.
   */
  processingTtl?: number
  /** Checks (and types) the payload again in the worker: a job queued by an older release, or by hand. */
  schema?: StandardSchemaV1<unknown, Payload>
}

/** What one run of a job did: ran the handler, or found the delivery handled already. */
export type RunOutcome<Result> = { ran: true; result: Result } | { ran: false; reason: 'done' }

/**
 * Thrown when another worker is running the same delivery now: the queue should try the job again
 * later (its backoff), by when that run has settled.
 */
export class DeliveryInProgressError extends Error {
  override readonly name = 'DeliveryInProgressError'
  /** Milliseconds until the other run's claim expires, at the latest. */
  readonly retryAfterMs: number
  constructor(retryAfterMs: number) {
    super('This delivery is being handled by another worker; the job will be tried again.')
    this.retryAfterMs = retryAfterMs
  }
}

/** The delivery a job holds, as a handler sees it; a job that is not one hookguard queued throws a `TypeError`. */
export function deliveryOfJob<Payload = unknown>(job: HandoffJob<Payload>): QueuedDelivery<Payload> {
  const { id, key, mode, payload, rawBody, fingerprint, receivedAt, headers } = (job ?? {}) as Partial<HandoffJob<Payload>>
  const bytes = typeof rawBody === 'string' ? fromBase64(rawBody) : undefined
  const time = typeof receivedAt === 'string' ? new Date(receivedAt) : undefined
  if (
    typeof id !== 'string' ||
    typeof key !== 'string' ||
    typeof fingerprint !== 'string' ||
    typeof mode !== 'string' ||
    bytes === undefined ||
    time === undefined ||
    Number.isNaN(time.getTime()) ||
    typeof headers !== 'object' ||
    headers === null
  ) {
    throw new TypeError('@hookguard/core: this job was not queued by a hookguard hand-off (or was changed since)')
  }
  return { jobId: id, key, mode, payload: payload as Payload, rawBody: bytes, fingerprint, receivedAt: time, headers }
}

/**
 * Runs `handler` for a queued job once per delivery: the one place a queue's worker helper asks
 * whether to run it. The handler's failure is rethrown (after giving the claim back) for the queue
 * to retry; a run already under way elsewhere throws {@link DeliveryInProgressError}.
 */
export async function runOnce<Payload, Result>(
  job: HandoffJob<Payload>,
  handler: (delivery: QueuedDelivery<Payload>) => Result | Promise<Result>,
  options: RunOnceOptions<Payload> = {},
): Promise<RunOutcome<Result>> {
  const { store, ttl = DEFAULT_DEDUPE_TTL, processingTtl = DEFAULT_PROCESSING_TTL, schema } = options
  const delivery = deliveryOfJob(job)
  if (schema !== undefined) delivery.payload = await validatePayload(schema, delivery.payload)
  if (store === undefined) return { ran: true, result: await handler(delivery) }
  // Read before the claim is asked for, so the claim lasts at least until then.
  const claimHolds = Date.now() + processingTtl * 1000
  const found = await store.claim(delivery.key, processingTtl * 1000)
  if (found.state === 'done') return { ran: false, reason: 'done' }
  if (found.state === 'processing') throw new DeliveryInProgressError(found.retryAfterMs)
  let result: Result
  try {
    result = await handler(delivery)
  } catch (error) {
    // Given back, so that the queue's retry runs it; a store that fails here leaves the claim to expire.
    await Promise.resolve()
      .then(() => found.claim.release())
      .catch(() => {})
    throw error
  }
  await markDone(found.claim, ttl * 1000, claimHolds)
  return { ran: true, result }
}
