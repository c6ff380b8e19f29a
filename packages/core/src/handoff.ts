import { backend } from '#crypto'
import type { WebhookMode } from './auth.ts'
import { toBase64, toHex, utf8 } from './bytes.ts'
import { within } from './dedupe.ts'
import type { WebhookDelivery } from './delivery.ts'
import { WebhookError } from './errors.ts'
import type { WebhookRequest } from './request.ts'
import { jsonResponse, type WebhookResponse } from './response.ts'

/**
 * A verified delivery on its way to a worker: plain JSON, so that any queue carries it as it is.
 * It never holds a credential: no secret, password or token, and of the request's headers only
 * those of {@link HANDOFF_HEADERS}.
 */
export interface HandoffJob<Payload = unknown> {
  /**
   * The same for every copy of one delivery, and safe as any queue's job id (`hg-` and 64 hex
   * digits): the queue's own deduplication uses it, so a copy that arrives while the job exists
   * adds no second job.
   */
  id: string
  /** The delivery's dedupe key (see `dedupe.key`), which the worker claims so that a job retried after its work succeeded does not run it again. */
  key: string
  /** A name for dashboards: the payload's `event` field when it is a short name, else `delivery`. */
  name: string
  mode: WebhookMode
  /** The parsed payload (the schema's output with `schema`, as JSON carries it). */
  payload: Payload
  /**
   * The bytes received, in base64: a worker can verify them again or parse them its own way. A form
   * body in mode `oauth2` is kept without its `access_token` field (what its fingerprint covers):
   * a job never holds a credential.
   */
  rawBody: string
  /** As `WebhookDelivery.fingerprint`. */
  fingerprint: string
  /** When the receiver verified it, as an ISO 8601 time. */
  receivedAt: string
  /** The request's headers of {@link HANDOFF_HEADERS}, by lower-case name. */
  headers: Record<string, string>
}

/** Where a receiver hands deliveries off: a durable queue, through its package's helper (`@hookguard/bullmq`, `@hookguard/cloudflare`). */
export interface HandoffQueue {
  /**
   * Puts the job on the queue and resolves once the queue holds it durably; `duplicate` when a job
   * of the same `id` was already there and nothing was added. Rejects when the queue cannot take it.
   */
  enqueue(job: HandoffJob): Promise<{ jobId: string; duplicate: boolean }>
  /**
   * The largest body, in bytes, whose job this queue can carry (a Cloudflare Queues message holds
   * 128 KB), when it has such a limit. The receiver's `maxBodySize` defaults to it and may not
   * exceed it: a larger delivery would be refused by the queue on every retry of the service, so it
   * is refused up front, 413, as too large.
   */
  readonly maxBodySize?: number
}

/** The `handoff` option: answer the service once the delivery is queued, and let a worker run it. */
export interface HandoffOptions {
  queue: HandoffQueue
  /** The answer's status once the job is queued: a 2xx, default 202. */
  status?: number
  /**
   * Milliseconds to wait for the queue before answering 503 `queue_unavailable`, so that a queue
   * that never answers never holds the sender's connection past its own timeout. Default 5000.
   */
  timeout?: number
}

/**
 * The only request headers a job keeps: what says what the body is and where it came from, and
 * nothing that carries or derives from a credential (`Authorization`, `Cookie`, the signature).
 */
export const HANDOFF_HEADERS = ['content-type', 'user-agent', 'x-request-id', 'traceparent', 'tracestate'] as const

export const DEFAULT_HANDOFF_STATUS = 202
export const DEFAULT_HANDOFF_TIMEOUT = 5_000
/** Seconds a sender is told to wait after a queue could not take its delivery. */
const QUEUE_RETRY_AFTER = 5
const EVENT_NAME = /^[\w.:-]{1,100}$/
const MAX_TIMER_MS = 2 ** 31 - 1

/** What a hand-off answered: queued as a new job, or the job was there already. */
export type HandoffVerdict = { queued: true; jobId: string; response: WebhookResponse } | { queued: false; response: WebhookResponse }

/** Puts a verified delivery on the queue under `key`, and says what to answer. */
export async function handOff(
  options: HandoffOptions,
  req: WebhookRequest,
  delivery: WebhookDelivery,
  key: string,
  duplicateStatus: number,
  receivedAt: number,
  bytes: Uint8Array,
): Promise<HandoffVerdict> {
  const { queue, status = DEFAULT_HANDOFF_STATUS, timeout = DEFAULT_HANDOFF_TIMEOUT } = options
  const job = await jobOf(req, delivery, key, receivedAt, bytes)
  let answer: { jobId: string; duplicate: boolean }
  try {
    answer = checkedAnswer(await within(Promise.resolve(queue.enqueue(job)), timeout, 'the queue'))
  } catch (cause) {
    // A queue that says what is wrong with the delivery itself (too large for a message) is heard.
    if (cause instanceof WebhookError && cause.code === 'payload_too_large') throw cause
    // A job queued after the timeout is still the delivery's only job: the service's retry finds it.
    // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
    throw new WebhookError('queue_unavailable', 'The queue cannot be reached; the delivery was not accepted. Try again later.', {
      headers: { 'retry-after': String(QUEUE_RETRY_AFTER) },
      cause,
    })
  }
  if (answer.duplicate)
    return { queued: false, response: jsonResponse(duplicateStatus, { duplicate: true, fingerprint: delivery.fingerprint }) }
  return { queued: true, jobId: answer.jobId, response: jsonResponse(status, { queued: true, jobId: answer.jobId }) }
}

async function jobOf(
  req: WebhookRequest,
  delivery: WebhookDelivery,
  key: string,
  receivedAt: number,
  bytes: Uint8Array,
): Promise<HandoffJob> {
  const { mode, payload, fingerprint } = delivery
  const headers: Record<string, string> = {}
  for (const name of HANDOFF_HEADERS) {
    const value = req.header(name)
    if (value !== null) headers[name] = value
  }
  const event = (payload as { event?: unknown } | null)?.event
  return {
    id: `hg-${toHex(await backend.sha256(utf8(key)))}`,
    key,
    name: typeof event === 'string' && EVENT_NAME.test(event) ? event : 'delivery',
    mode,
    payload,
    rawBody: toBase64(bytes),
    fingerprint,
    receivedAt: new Date(receivedAt).toISOString(),
    headers,
  }
}

/** The queue's answer as the interface promises it; anything else is a queue that failed. */
function checkedAnswer(answer: unknown): { jobId: string; duplicate: boolean } {
  const { jobId, duplicate } = (answer ?? {}) as { jobId?: unknown; duplicate?: unknown }
  if (typeof jobId === 'string' && typeof duplicate === 'boolean') return { jobId, duplicate }
  throw new TypeError('the queue answered enqueue() without a jobId string and a duplicate boolean')
}

/** Checks the `handoff` option at setup. */
export function checkHandoff(handoff: unknown, fail: (message: string) => never): void {
  if (typeof handoff !== 'object' || handoff === null)
    fail('handoff must be an object: { queue }, e.g. handoff(queue) of @hookguard/bullmq')
  const { queue, status, timeout } = handoff as Partial<Record<keyof HandoffOptions, unknown>>
  if (typeof (queue as Partial<HandoffQueue> | null)?.enqueue !== 'function') fail('handoff.queue must have an enqueue(job) method')
  const { maxBodySize } = queue as HandoffQueue
  if (maxBodySize !== undefined && !(Number.isSafeInteger(maxBodySize) && maxBodySize > 0))
    fail('handoff.queue.maxBodySize must be a positive integer')
  if (status !== undefined && !(Number.isInteger(status) && (status as number) >= 200 && (status as number) < 300)) {
    fail('handoff.status must be a 2xx status')
  }
  // Past 2^31 - 1 ms a timer fires at once (Node, browsers): every delivery would be answered 503.
  if (timeout !== undefined && !(Number.isSafeInteger(timeout) && (timeout as number) > 0 && (timeout as number) <= MAX_TIMER_MS)) {
    fail(`handoff.timeout must be a positive integer of milliseconds, at most ${MAX_TIMER_MS}`)
  }
}
