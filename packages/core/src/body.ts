import { BodyBytes } from './body-bytes.ts'
import { watchBody } from './body-watch.ts'
import { DRAIN_BOUNDS, type DrainBounds, drainedRefusal, RECEIPT_BOUNDS, type TimeBounds } from './drain.ts'
import { bodyTooSlow, payloadTooLarge } from './errors.ts'
import { type HeaderSource, readHeader } from './request.ts'

/** One decimal length, as RFC 9110 §8.6 writes it: digits only, no sign, no exponent, no spaces inside. */
const DIGITS = /^[0-9]+$/

/**
 * The body length the headers declare: a number, `undefined` when they declare none (no
 * `Content-Length`, or chunked), or `'invalid'` when the declaration cannot be trusted.
 *
 * Parsed strictly, because a lenient reading is a way around the size limit: `Number('5, 5')` is
 * `NaN`, which compares as neither over nor under it. RFC 9110 §8.6 allows a list only when every
 * value is the same (a repeated header line arrives joined with `, `). A request with both
 * `Content-Length` and `Transfer-Encoding` is the classic request-smuggling shape; RFC 9112 §6.1
 * lets a server refuse it, and refusing is the only way to be sure which framing a runtime used.
 * `transferEncoding` is that header's value where the caller has read it already.
 */
export function declaredBodyLength(headers: HeaderSource, transferEncoding?: string | null): number | undefined | 'invalid' {
  const contentLength = readHeader(headers, 'content-length')
  if (contentLength === null) return undefined
  if ((transferEncoding === undefined ? readHeader(headers, 'transfer-encoding') : transferEncoding) !== null) return 'invalid'
  // One value, as every client sends it: no list to split.
  // Stryker disable next-line ConditionalExpression: speed only — the loop below reads one value the same way (→ true is killed)
  if (DIGITS.test(contentLength)) return Number(contentLength)
  let length: string | undefined
  for (const part of contentLength.split(',')) {
    const value = part.trim()
    if (!DIGITS.test(value) || (length !== undefined && Number(value) !== Number(length))) return 'invalid'
    length = value
  }
  return Number(length)
}

/**
 * Reads a Web stream to its end, refusing with `payload_too_large` once more than `limit` bytes
 * have arrived, or from the start when `declared` (a `Content-Length` the core checked) is already
 * over it. Past the limit nothing more is kept: the rest is read and discarded within the drain
 * bounds (`DRAIN_MAX_BYTES`, `DRAIN_MAX_MS`, `DRAIN_IDLE_MS`), so that a sender that writes its
 * whole body before reading gets the answer, on a connection that stays usable. A body that ends
 * within them is refused as drained; past a bound, or when the stream fails, the reader is
 * cancelled and the refusal is not drained (the core's answer then says `Connection: close`). For
 * runtimes whose request body is a `ReadableStream` (Hono, Bun, Deno, Workers). Before that,
 * within the limit, a body that goes `BODY_IDLE_MS` without a byte, or has not ended `BODY_MAX_MS`
 * after reading began, is cancelled and refused as `invalid_body`.
 *
 * `bounds` and `receipt` are for the library's own tests.
 */
export async function readLimited(
  stream: ReadableStream<Uint8Array> | null,
  limit: number,
  declared?: number,
  bounds: DrainBounds = DRAIN_BOUNDS,
  receipt: TimeBounds = RECEIPT_BOUNDS,
): Promise<Uint8Array> {
  if (stream === null) return new Uint8Array(0)
  // Declared over the limit: nothing of it is kept, so it is read into one reused buffer where it can be.
  if (declared !== undefined && declared > limit) {
    throw (await discardRest(discarding(stream), bounds)) ? drainedRefusal(limit) : payloadTooLarge(limit)
  }
  const reader = stream.getReader()
  const kept = new BodyBytes()
  let size = 0
  // A bound cancels the reader, which ends a read still waiting for a byte.
  let late = false
  const watch = watchBody(receipt, () => {
    late = true
    reader.cancel().catch(() => {})
  })
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (late) throw bodyTooSlow()
      if (done) break
      size += value.byteLength
      if (size > limit) break
      kept.add(value)
      watch.arrived()
    }
  } catch (error) {
    throw late ? bodyTooSlow() : error
  } finally {
    watch.cancel()
  }
  if (size <= limit) return kept.bytes()
  // Refused: from here on, bytes are counted and let go, through the reader that read them.
  kept.clear()
  throw (await discardRest(chunksOf(reader), bounds)) ? drainedRefusal(limit) : payloadTooLarge(limit)
}

/** Bytes a discarding read fills at most: one buffer, reused for the whole drain. */
const DISCARD_BUFFER = 64 * 1024

/** Reads the rest of a body without keeping it: each `read()` resolves the bytes it let go. */
interface Discarding {
  read(): Promise<ReadableStreamReadResult<Uint8Array>>
  cancel(): Promise<void>
}

/**
 * A whole body read into one buffer, reused, where it is a byte stream (a request body is in Deno);
 * else chunk by chunk. Each chunk of a default reader is a new allocation, let go at once but
 * freed only later: draining three 64 MiB bodies that way grew a Deno process by 50 to 60 MiB, and
 * into one buffer by about 10 (docs/runtimes.md).
 */
function discarding(stream: ReadableStream<Uint8Array>): Discarding {
  let bytes: ReadableStreamBYOBReader
  try {
    bytes = stream.getReader({ mode: 'byob' })
  } catch {
    // Not a byte stream.
    return chunksOf(stream.getReader())
  }
  let buffer = new Uint8Array(DISCARD_BUFFER)
  return {
    read: () =>
      bytes.read(buffer).then((result) => {
        // The read transferred the buffer: its memory comes back in `value`, to be filled again.
        if (result.value !== undefined) buffer = new Uint8Array(result.value.buffer)
        return result
      }),
    cancel: () => bytes.cancel(),
  }
}

function chunksOf(reader: ReadableStreamDefaultReader<Uint8Array>): Discarding {
  return { read: () => reader.read(), cancel: () => reader.cancel() }
}

/** Reads `body` to its end within `bounds`, keeping nothing; whether it ended (else it is cancelled). */
async function discardRest(body: Discarding, bounds: DrainBounds): Promise<boolean> {
  let cut = false
  // A bound cancels the reader, which ends a read still waiting for a byte.
  const watch = watchBody(bounds, () => {
    cut = true
    body.cancel().catch(() => {})
  })
  let discarded = 0
  try {
    for (;;) {
      const { done, value } = await body.read()
      if (cut) return false
      if (done) return true
      discarded += value.byteLength
      if (discarded > bounds.bytes) break
      watch.arrived()
    }
  } catch {
    // The stream failed: the client went away, or the runtime gave up on the body.
    return false
  } finally {
    watch.cancel()
  }
  await body.cancel().catch(() => {})
  return false
}
