import { payloadTooLarge } from './errors.ts'
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
 */
export function declaredBodyLength(headers: HeaderSource): number | undefined | 'invalid' {
  const contentLength = readHeader(headers, 'content-length')
  if (contentLength === null) return undefined
  if (readHeader(headers, 'transfer-encoding') !== null) return 'invalid'
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
 * Reads a Web stream to its end, refusing with `payload_too_large` as soon as more than `limit`
 * bytes have arrived; the rest of the stream is cancelled, not read. For runtimes whose request
 * body is a `ReadableStream` (Hono, Bun, Deno, Workers).
 */
export async function readLimited(stream: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array> {
  if (stream === null) return new Uint8Array(0)
  const reader = stream.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw payloadTooLarge(limit)
    }
    chunks.push(value)
  }
  // Stryker disable next-line ConditionalExpression: speed only — joining one chunk copies the same bytes (→ true is killed)
  if (chunks.length === 1) return chunks[0] as Uint8Array
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    body.set(chunk, offset)
    offset += chunk.byteLength
  }
  return body
}
