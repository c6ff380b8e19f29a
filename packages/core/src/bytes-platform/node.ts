import { isUtf8 } from 'node:buffer'

/**
 * Strict UTF-8 decoding: throws a `TypeError` on malformed input rather than inserting U+FFFD.
 * Validating with `isUtf8` and decoding with Buffer (both SIMD) beats a fatal TextDecoder, which
 * goes through ICU, several times over on webhook-sized bodies.
 */
export function decodeUtf8(data: Uint8Array): string {
  if (!isUtf8(data)) throw new TypeError('The data is not valid UTF-8')
  // The Node adapters hand over a Buffer already: no view to make per delivery.
  const buffer = data instanceof Buffer ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  return buffer.toString('utf8')
}

/** Whether the bytes are valid UTF-8 (Node's native, SIMD check). */
export function isUtf8Bytes(data: Uint8Array): boolean {
  return isUtf8(data)
}

const indexOf = Buffer.prototype.indexOf

/** Whether any of `values` occurs in `data`: one native `memchr` each, many times a JavaScript scan. */
export function containsAnyByte(data: Uint8Array, values: readonly number[]): boolean {
  for (const value of values) if (indexOf.call(data, value) !== -1) return true
  return false
}

/** Whether the bytes in `values` occur more than `limit` times in all: memchr from one to the next. */
export function occursMoreThan(data: Uint8Array, values: readonly number[], limit: number): boolean {
  let count = 0
  for (const value of values) {
    for (let at = indexOf.call(data, value); at !== -1; at = indexOf.call(data, value, at + 1)) {
      if (++count > limit) return true
    }
  }
  return false
}

/** Where `value` next occurs in `data` from `from`, or -1: one native `memchr`. */
export function indexOfByte(data: Uint8Array, value: number, from: number): number {
  return indexOf.call(data, value, from)
}

/** Standard padded base64: Buffer's native encoder, with no binary string built on the way. */
export function toBase64(data: Uint8Array): string {
  const buffer = data instanceof Buffer ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  return buffer.toString('base64')
}

/**
 * Decodes hex of either case; `undefined` for odd lengths or any character outside 0-9 a-f A-F.
 * Buffer's native decoder, where a JavaScript loop reads the signature header's 64 characters one
 * `charCodeAt` at a time (see docs/benchmarks.md, notes). It stops at the first pair that is not
 * hex, which the count of bytes written tells, and reads a character above U+00FF by its low byte
 * (`š` as `a`), so a text with any character outside ASCII is refused first: its UTF-8 is longer.
 */
export function fromHex(text: string): Uint8Array | undefined {
  if (text.length % 2 !== 0 || Buffer.byteLength(text, 'utf8') !== text.length) return undefined
  const bytes = Buffer.allocUnsafe(text.length / 2)
  return bytes.write(text, 'hex') === bytes.length ? bytes : undefined
}
