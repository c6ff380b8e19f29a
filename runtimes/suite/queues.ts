/** What the Cloudflare Queues Worker (`queues-worker.ts`) and its driver (`queues-workerd.ts`) share. */

export const QUEUES_SECRET = 'whsec-cloudflare-queues-5e0b'
export const QUEUE = 'webhooks'
export const DEAD_LETTER_QUEUE = 'webhooks-dlq'
/**
 * The queue of the steady-copies case, with more retries: every copy's look at the store that a
 * consumer meets costs the message an attempt, and that case makes such meetings frequent.
 */
export const STEADY_QUEUE = 'webhooks-steady'
export const STEADY_MAX_RETRIES = 20
/** The consumer's `max_retries`: a message is tried this many times more, then dead-lettered. */
export const MAX_RETRIES = 3
/** The receivers' `maxBodySize`, as the docs advise for Cloudflare Queues' 128 KB message limit. */
export const MAX_BODY_SIZE = 48 * 1024

/** A delivery's payload, which tells the handler what to do: throw on its first `fail` runs, each run taking `ms`. */
export interface QueuedPayload {
  id: string
  fail: number
  ms: number
  /** Text that makes bodies differ: whitespace, escapes, other scripts. */
  note: string
}

/** Per delivery id, what the consumer saw: handler runs, queue messages that carried it, and what reached the dead-letter queue. */
export interface Consumed {
  started: number
  completed: number
  failed: number
  /** Distinct queue messages that carried the delivery's job. */
  messages: number
  /** Times a message of it reached the dead-letter queue's consumer. */
  deadLettered: number
  /** The raw body and the payload (as JSON) the successful run was handed. */
  raw: string | null
  payload: string | null
}

export type ConsumedCounts = Record<string, Consumed>
