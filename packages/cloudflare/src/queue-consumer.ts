import {
  type DedupeStore,
  DeliveryInProgressError,
  deliveryOfJob,
  type HandoffJob,
  type QueuedDelivery,
  runOnce,
  type StandardSchemaV1,
  WebhookError,
} from '@hookguard/core'

/** Cloudflare Queues' longest retry delay (12 hours). */
const MAX_DELAY_SECONDS = 43_200

/**
 * One message of a batch, as the consumer reads and settles it: `Message` of
 * `@cloudflare/workers-types` (or `wrangler types`) is one.
 */
export interface QueueMessage {
  readonly id: string
  readonly body: unknown
  /** 1 on the first delivery of the message, one more on each retry. */
  readonly attempts: number
  ack(): void
  retry(options?: { delaySeconds?: number }): void
}

/** A batch of messages, as the runtime hands it to the Worker's `queue` handler: `MessageBatch` is one. */
export interface QueueBatch {
  readonly queue: string
  readonly messages: readonly QueueMessage[]
}

export interface QueueConsumerOptions<Payload = unknown, Env = unknown> {
  /**
   * The receiver's dedupe store, or a function of the Worker's `env` that gives it (made once, on
   * the first batch): `durableObjectDedupeStore(env.DEDUPE)`. The handler runs under a claim of the
   * delivery's key and the key is marked done once it succeeds, so a message delivered again (the
   * queue is at-least-once) or a second message of one delivery does not run it twice. Without a
   * store, each message runs the handler.
   */
  store?: DedupeStore | ((env: Env) => DedupeStore)
  /** Checks (and types) the payload again; a message it refuses is not retried into success (see `queueConsumer`). */
  schema?: StandardSchemaV1<unknown, Payload>
  /** Seconds a handled delivery is remembered; default 86 400. */
  ttl?: number
  /** Seconds the handler holds its claim (a consumer that dies mid-run holds it that long); default 300. */
  processingTtl?: number
  /**
   * Seconds before a message whose handler failed is tried again: a number, or a function of the
   * attempts made so far (`message.attempts`), for a backoff. Default: the queue's `retry_delay`.
   */
  retryDelay?: number | ((attempts: number) => number)
}

/**
 * The Worker's `queue(batch, env, ctx)` export for the queue that `queueHandoff` sends to: each
 * message is acknowledged or retried on its own, so one message that fails never retries the
 * others. Per message, the core's `runOnce` decides:
 *
 * - the handler succeeded, or the delivery was handled already: `ack()`;
 * - the handler threw (or the store could not be reached): `retry()`, after `retryDelay`; after
 *   the queue's `max_retries` the message goes to its `dead_letter_queue`;
 * - another consumer is running the same delivery: `retry()` once its claim can have settled;
 * - the message is no hookguard job, or its payload fails `schema`: retried at once (no delay), so
 *   that it reaches the dead-letter queue in a few attempts and stays there for a look and a
 *   replay; it never runs the handler, and what is logged names the message, never its payload.
 *
 * The messages of a batch run side by side.
 *
 * @example
 * // The Worker's module then ends with: export default { fetch: app.fetch, queue }
 * const queue = queueConsumer<Order, Env>(
 *   async (delivery, env) => {
 *     await env.DB.save(delivery.payload)
 *   },
 *   { store: (env) => durableObjectDedupeStore(env.DEDUPE) },
 * )
 */
export function queueConsumer<Payload = unknown, Env = unknown, Ctx = unknown>(
  handler: (delivery: QueuedDelivery<Payload>, env: Env, ctx: Ctx) => unknown,
  options: QueueConsumerOptions<Payload, Env> = {},
): (batch: QueueBatch, env: Env, ctx: Ctx) => Promise<void> {
  const { store, schema, ttl, processingTtl, retryDelay } = options
  if (typeof handler !== 'function') throw new TypeError('@hookguard/cloudflare: queueConsumer takes the handler as its first argument')
  if (store !== undefined && typeof store !== 'function' && typeof store?.claim !== 'function') {
    throw new TypeError('@hookguard/cloudflare: queueConsumer store must be a DedupeStore, or a function of env that gives one')
  }
  if (retryDelay !== undefined && typeof retryDelay !== 'function') checkDelay(retryDelay)
  for (const [name, seconds] of [
    ['ttl', ttl],
    ['processingTtl', processingTtl],
  ] as const) {
    if (seconds !== undefined && !(Number.isSafeInteger(seconds) && seconds > 0)) {
      throw new TypeError(`@hookguard/cloudflare: queueConsumer ${name} must be a whole number of seconds, 1 or more`)
    }
  }
  // A function of env is called once: a Worker's env is the same for every batch of an isolate.
  let shared: DedupeStore | undefined
  const storeOf = (env: Env): DedupeStore | undefined => {
    if (typeof store !== 'function') return store
    shared ??= store(env)
    return shared
  }
  const runOptions = {
    ...(schema === undefined ? {} : { schema }),
    ...(ttl === undefined ? {} : { ttl }),
    ...(processingTtl === undefined ? {} : { processingTtl }),
  }

  return async function queue(batch, env, ctx) {
    const found = storeOf(env)
    const settings = found === undefined ? runOptions : { ...runOptions, store: found }
    await Promise.all(
      batch.messages.map(async (message) => {
        const job = message.body as HandoffJob<Payload>
        let started = false
        try {
          // A body that is no job fails here, apart from the handler's own errors, which may be TypeErrors too.
          deliveryOfJob(job)
        } catch {
          return poisoned(message, batch.queue, 'it is no hookguard job')
        }
        try {
          await runOnce(
            job,
            (delivery) => {
              started = true
              return handler(delivery, env, ctx)
            },
            settings,
          )
          message.ack()
        } catch (error) {
          if (!started && error instanceof WebhookError && error.code === 'invalid_payload') {
            return poisoned(message, batch.queue, `its payload fails the schema at ${error.paths?.join(', ') || '(root)'}`)
          }
          settle(message, batch.queue, error, retryDelay)
        }
      }),
    )
  }
}

/** A message whose run threw: retried, at the time the kind of failure calls for. */
function settle(message: QueueMessage, queue: string, error: unknown, retryDelay: QueueConsumerOptions['retryDelay']): void {
  if (error instanceof DeliveryInProgressError) {
    // Whole seconds, and never sooner than a second: by then the other run has settled or its claim expired.
    message.retry({ delaySeconds: Math.min(MAX_DELAY_SECONDS, Math.max(1, Math.ceil(error.retryAfterMs / 1000))) })
    return
  }
  console.error(
    `@hookguard/cloudflare: message ${message.id} of queue ${queue} failed on attempt ${message.attempts}; the queue retries it`,
    error,
  )
  if (retryDelay === undefined) message.retry()
  else message.retry({ delaySeconds: checkDelay(typeof retryDelay === 'function' ? retryDelay(message.attempts) : retryDelay) })
}

/**
 * A message that no retry mends: retried at once, so that it reaches the dead-letter queue in a few
 * attempts and is kept there, rather than acknowledged and lost. What is logged names the message
 * and the schema's failing paths, never the payload.
 */
function poisoned(message: QueueMessage, queue: string, why: string): void {
  console.error(
    `@hookguard/cloudflare: message ${message.id} of queue ${queue} cannot run (${why}); retried to reach the dead-letter queue`,
  )
  message.retry({ delaySeconds: 0 })
}

function checkDelay(seconds: number): number {
  if (!Number.isSafeInteger(seconds) || seconds < 0 || seconds > MAX_DELAY_SECONDS) {
    throw new TypeError(`@hookguard/cloudflare: queueConsumer retryDelay must be a whole number of seconds from 0 to ${MAX_DELAY_SECONDS}`)
  }
  return seconds
}
