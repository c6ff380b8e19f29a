import { DEFAULT_HANDOFF_TIMEOUT, type DedupeStore, type HandoffJob, type HandoffOptions, WebhookError } from '@hookguard/core'

/**
 * Seconds a queued marker is kept by default: Cloudflare Queues' default message retention (four
 * days), so a copy that arrives while its message may still wait on the queue finds the marker.
 */
export const DEFAULT_QUEUE_RETENTION = 345_600
/** Longest retention a queue can be set to (`message_retention_period_seconds`): 14 days. */
const MAX_QUEUE_RETENTION = 1_209_600

/**
 * The largest body whose job a Cloudflare Queues message carries: a message holds at most 128 KB,
 * and a job holds the body about 2.4 times (the parsed payload, and the bytes in base64). The
 * receiver's `maxBodySize` defaults to it, so that a delivery no message could hold is refused 413
 * at once rather than answered 503 on every retry.
 */
export const MAX_QUEUED_BODY = 48 * 1024
/**
 * What a message may hold, in bytes (Cloudflare: 128 KB). The 2.4 times above is the usual case;
 * a payload whose numbers grow when parsed and written again (`1e20` is 21 digits) makes a job
 * larger, so each job is measured before it is sent.
 */
const MAX_MESSAGE_BYTES = 128_000

/**
 * The Worker's queue producer binding (`env.WEBHOOKS`, a `queues.producers` entry of
 * wrangler.jsonc): the one method the hand-off calls, typed loosely so that `Queue` from
 * `@cloudflare/workers-types` or from `wrangler types` (of any body type) is accepted as it is.
 */
export interface QueueProducer {
  send(message: never, options?: { contentType?: 'json' }): Promise<unknown>
}

export interface QueueHandoffOptions {
  /**
   * Where a marker of each queued delivery is kept, so that a copy that arrives while its message
   * waits is answered as a duplicate instead of sent again: Cloudflare Queues has no deduplication
   * of its own. Pass `durableObjectDedupeStore(env.DEDUPE)`. Without it every copy is sent, and
   * the consumer's store (see `queueConsumer`) still runs the handler once per delivery.
   */
  store?: DedupeStore
  /** The answer's status once queued: a 2xx, default 202. */
  status?: number
  /** Milliseconds to wait for the queue (and the store) before answering 503 `queue_unavailable`; default 5000. */
  timeout?: number
  /**
   * Seconds a queued delivery's marker is kept: the queue's `message_retention_period_seconds`,
   * default 345 600 (four days, Cloudflare's default). After it, a copy is queued again, which
   * the consumer's store then finds handled.
   */
  retention?: number
}

/**
 * The `handoff` option of `@hookguard/hono` and `@hookguard/fetch` for a Cloudflare Queue: each
 * verified delivery is sent to `binding` as one JSON message (the core's `HandoffJob`), and the
 * service is answered 202 once the queue has taken it; 503 `queue_unavailable` when it cannot.
 *
 * With `store`, a marker `queued:<job id>` is claimed before the message is sent: a copy whose
 * marker is there is answered 200 as a duplicate without a second message; a copy that arrives
 * while the first is still being sent is answered 503 (the service retries, and then finds it
 * queued), never 200 for a message that might not be sent. A send that fails gives the marker
 * back; one that succeeds keeps it for `retention`.
 *
 * @example
 * // env.WEBHOOKS: a queue producer binding; env.DEDUPE: the HookguardDedupe binding (wrangler.jsonc)
 * const handoff = queueHandoff(env.WEBHOOKS, { store: durableObjectDedupeStore(env.DEDUPE) })
 * // then: webhook({ auth, handoff }) from @hookguard/hono or @hookguard/fetch
 */
export function queueHandoff(binding: QueueProducer, options: QueueHandoffOptions = {}): HandoffOptions {
  const { store, status, timeout = DEFAULT_HANDOFF_TIMEOUT, retention = DEFAULT_QUEUE_RETENTION } = options
  if (typeof binding?.send !== 'function') {
    throw new TypeError(
      '@hookguard/cloudflare: queueHandoff takes the Worker’s queue producer binding (env.WEBHOOKS), as wrangler.jsonc binds it under queues.producers',
    )
  }
  if (store !== undefined && typeof store?.claim !== 'function') {
    throw new TypeError('@hookguard/cloudflare: queueHandoff store must be a DedupeStore, such as durableObjectDedupeStore(env.DEDUPE)')
  }
  if (!Number.isSafeInteger(retention) || retention < 1 || retention > MAX_QUEUE_RETENTION) {
    throw new TypeError(`@hookguard/cloudflare: queueHandoff retention must be a whole number of seconds from 1 to ${MAX_QUEUE_RETENTION}`)
  }
  // The core checks status and timeout with the rest of the options; the marker's claim needs the timeout here.
  const sendTtlMs = 2 * (Number.isSafeInteger(timeout) && timeout > 0 ? timeout : DEFAULT_HANDOFF_TIMEOUT)
  const send = (job: HandoffJob) => binding.send(job as never, { contentType: 'json' })

  return {
    queue: {
      maxBodySize: MAX_QUEUED_BODY,
      async enqueue(job) {
        // Refused 413, never sent: the queue would refuse it on every retry of the service.
        const size = new TextEncoder().encode(JSON.stringify(job)).byteLength
        if (size > MAX_MESSAGE_BYTES) throw tooLargeForMessage(size)
        if (store === undefined) {
          await send(job)
          return { jobId: job.id, duplicate: false }
        }
        // Held while the message is sent: long enough to outlast the receiver's timeout, short
        // enough that a marker orphaned by an isolate that died mid-send soon lets a copy through.
        const found = await store.claim(`queued:${job.id}`, sendTtlMs)
        if (found.state === 'done') return { jobId: job.id, duplicate: true }
        if (found.state === 'processing') {
          // Not a duplicate yet: the first copy's send may still fail, and a 200 here would lose the delivery.
          throw new Error('a copy of this delivery is being queued now; try again shortly')
        }
        try {
          await send(job)
        } catch (error) {
          await Promise.resolve()
            .then(() => found.claim.release())
            .catch(() => {})
          throw error
        }
        // The message is queued whatever happens to the marker: a marker that could not be kept
        // expires with its claim, and a later copy is queued again, which the consumer's store finds handled.
        await Promise.resolve()
          .then(() => found.claim.complete(retention * 1000))
          .catch(() => {})
        return { jobId: job.id, duplicate: false }
      },
    },
    ...(status === undefined ? {} : { status }),
    ...(options.timeout === undefined ? {} : { timeout }),
  }
}

/**
 * 413 for a delivery within `maxBodySize` whose job still outgrows a message: its payload, parsed
 * and written again, is larger than the bytes sent. Said as it is, so that nobody raises a limit
 * the body was never over; sizes only, nothing of the body.
 */
function tooLargeForMessage(size: number): WebhookError {
  return new WebhookError(
    'payload_too_large',
    `The delivery is within ${MAX_QUEUED_BODY} bytes, but its queue message would be ${size} bytes, over the ${MAX_MESSAGE_BYTES} a Cloudflare Queues message holds: its payload grows when parsed and written again (numbers such as 1e20).`,
  )
}
