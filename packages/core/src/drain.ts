import { payloadTooLarge, type WebhookError } from './errors.ts'

// What a body reader does with the rest of a body it refuses (413): it reads it and throws it
// away, within these bounds, before the answer is sent. A sender that writes its whole body
// before it reads the answer (the service's Java sender does) otherwise never sees the answer: a
// server that closes a connection with bytes of the client's still unread makes its kernel send a
// reset, and the reset takes the answer with it (RFC 9112 §9.6, "tear-down", and §9.3 on
// persistence). Read to its end, the body leaves the connection clean, and it stays open for the
// sender's next delivery; past a bound the reader stops, the answer says `Connection: close`, and
// the sender is cut off. Nothing discarded is held in memory.

/** At most this many bytes are read and discarded after the point of refusal: 64 MiB. */
export const DRAIN_MAX_BYTES = 64 * 1024 * 1024
/** For at most this long after the point of refusal, in milliseconds: 10 s. */
export const DRAIN_MAX_MS = 10_000
/**
 * And no longer than this without a byte arriving, in milliseconds: 1 s. A client that stopped
 * mid-body to wait for the answer (one that sent `Expect: 100-continue`, or a body still being
 * typed) gets it after about a second instead of after `DRAIN_MAX_MS`.
 */
export const DRAIN_IDLE_MS = 1_000

/** Bounds in time on reading a body: from the start, and between two bytes. */
export interface TimeBounds {
  /** Milliseconds from the start. */
  ms: number
  /** Milliseconds without a byte. */
  idleMs: number
}

/** The bounds a reader drains within. Only the library's own tests pass others. */
export interface DrainBounds extends TimeBounds {
  /** Bytes discarded after the point of refusal. */
  bytes: number
}

export const DRAIN_BOUNDS: DrainBounds = Object.freeze({ bytes: DRAIN_MAX_BYTES, ms: DRAIN_MAX_MS, idleMs: DRAIN_IDLE_MS })

// Before any refusal, a body within the limit is read to be judged: mode `secret` must have all of
// it before it can tell a forgery, so every sender is a stranger until its last byte. A sender that
// stops, or trickles, would otherwise hold the connection and what it sent until the server's own
// timeout (Node's `requestTimeout`, 300 s), however many such senders there are. The service writes
// a whole request at once, so these are far above what a delivery needs.

/** A body read to be judged may go this long without a byte, in milliseconds: 10 s. */
export const BODY_IDLE_MS = 10_000
/**
 * And must have arrived in full this long after reading began, in milliseconds: 30 s, as in
 * `hookguard inspect` and `listen`. The only bound where a runtime hands over a declared body
 * whole, with no byte seen before the last (the Fetch handler's fast path).
 */
export const BODY_MAX_MS = 30_000

export const RECEIPT_BOUNDS: TimeBounds = Object.freeze({ ms: BODY_MAX_MS, idleMs: BODY_IDLE_MS })

// Refusals whose body was read to its end: the connection is clean and stays usable. A set rather
// than a field, so that `WebhookError` keeps its public shape; the core's builds are split, so
// every entry point shares this module.
const drained = new WeakSet<WebhookError>()

/** `payload_too_large` for a body that was read (and discarded) to its end. */
export function drainedRefusal(limit: number): WebhookError {
  const error = payloadTooLarge(limit)
  drained.add(error)
  return error
}

/** Whether a body reader's rejection says that it read the body to its end. */
export function wasDrained(error: unknown): boolean {
  // A WeakSet answers false for a value that is not an object, rather than throwing.
  return drained.has(error as WebhookError)
}
