/**
 * The portable Java-`\s` stripper, over bytes: every build's above the WebAssembly kernel's size
 * and where no kernel can be had (crypto/wasm-strip.ts). Word-at-a-time, because most words of a
 * JSON body hold no byte <= 0x20 and can be copied whole; figures in docs/benchmarks.md.
 */
import { JAVA_WHITESPACE } from './canonical.ts'

/** 0 for Java's six whitespace bytes, 1 for every byte that stays: the output position advances by it. */
const KEEP = JAVA_WHITESPACE.map((b) => 1 - b)

// Stryker disable next-line ConditionalExpression: equivalent on every little-endian host, which all the runtimes hookguard supports are
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

/**
 * Whether any byte of a 32-bit word is <= 0x20, the range every whitespace byte is in. Exact:
 * a borrow can only start at a byte that is itself below 0x21, and bytes >= 0x80 never flag.
 */
// Stryker disable next-line ConditionalExpression: speed only — the byte-by-byte path strips the same bytes (tests compare with a reference at every alignment and length)
const hasLowByte = (word: number) => ((word - 0x21212121) & ~word & 0x80808080) !== 0

/** The body's 4-byte-aligned middle as words, and where it starts and ends in the body. */
function wordsOf(body: Uint8Array): { words: Uint32Array; start: number; end: number } {
  const start = Math.min((4 - (body.byteOffset % 4)) % 4, body.length)
  const count = (body.length - start) >>> 2
  // A body shorter than its misalignment has no aligned middle, and no view can start there.
  // Stryker disable next-line ConditionalExpression: equivalent — an empty view either way
  const words = count === 0 ? new Uint32Array(0) : new Uint32Array(body.buffer, body.byteOffset + start, count)
  // Stryker disable next-line ArithmeticOperator: speed only — the byte-by-byte path strips the same bytes (tests compare with a reference at every alignment and length)
  return { words, start, end: start + count * 4 }
}

/** Whether a signed 32-bit word has a byte <= 0x20 (the same test as {@link hasLowByte}, kept in int32 range). */
const lowBits = (word: number) => (word - 0x21212121) & ~word

/**
 * Index of the first byte Java's `\s` matches, or -1. Eight words a test over an `Int32Array`,
 * unrolled: signed words keep V8's arithmetic in 32-bit integers, which a `Uint32Array`'s values
 * above 2^31 would not (docs/benchmarks.md).
 */
export function indexOfJavaWhitespace(body: Uint8Array): number {
  const start = Math.min((4 - (body.byteOffset % 4)) % 4, body.length)
  // Stryker disable next-line EqualityOperator: equivalent — the byte at `start` is looked at next anyway, with the same index
  for (let i = 0; i < start; i++) if (JAVA_WHITESPACE[body[i] as number] === 1) return i
  const count = (body.length - start) >>> 2
  // Stryker disable next-line ConditionalExpression: speed only — the byte-by-byte path strips the same bytes (tests compare with a reference at every alignment and length)
  const words = count === 0 ? new Int32Array(0) : new Int32Array(body.buffer, body.byteOffset + start, count)
  let w = 0
  // Stryker disable next-line ConditionalExpression,EqualityOperator: speed only — the byte-by-byte path strips the same bytes (tests compare with a reference at every alignment and length)
  for (const last = words.length - 8; w <= last; w += 8) {
    const low =
      lowBits(words[w] as number) |
      lowBits(words[w + 1] as number) |
      lowBits(words[w + 2] as number) |
      lowBits(words[w + 3] as number) |
      lowBits(words[w + 4] as number) |
      lowBits(words[w + 5] as number) |
      lowBits(words[w + 6] as number) |
      lowBits(words[w + 7] as number)
    if ((low & 0x80808080) !== 0) break
  }
  // From the first block that flagged (or the last words and bytes), byte by byte.
  // Stryker disable next-line ArithmeticOperator,EqualityOperator: speed only — the byte-by-byte path strips the same bytes (tests compare with a reference at every alignment and length); past the end is undefined, never whitespace
  for (let i = start + w * 4; i < body.length; i++) if (JAVA_WHITESPACE[body[i] as number] === 1) return i
  return -1
}

/**
 * Removes exactly what Java's `\s` matches. A body without such bytes is returned as is, not
 * copied; otherwise the result is the one copy made. Words without a byte <= 0x20 (most of a
 * compact body) are copied whole.
 */
export function stripJavaWhitespace(body: Uint8Array): Uint8Array {
  const first = indexOfJavaWhitespace(body)
  if (first === -1) return body
  // Four spare bytes: a whole word may be written where fewer than four remain.
  const out = new Uint8Array(body.length + 4)
  const view = new DataView(out.buffer)
  out.set(body.subarray(0, first))
  let n = first
  const { words, start, end } = wordsOf(body)
  let i = first
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: speed only — the byte-by-byte path strips the same bytes (tests compare with a reference at every alignment and length)
  for (; i < body.length && (i < start || i >= end || (i - start) % 4 !== 0); i++) {
    const b = body[i] as number
    out[n] = b
    n += KEEP[b] as number
  }
  // Stryker disable next-line ConditionalExpression: speed only — the byte-by-byte path strips the same bytes (tests compare with a reference at every alignment and length)
  for (let w = (i - start) >>> 2; i < end; w++, i += 4) {
    const word = words[w] as number
    // Stryker disable next-line ConditionalExpression,BlockStatement: speed only — the byte-by-byte path strips the same bytes (tests compare with a reference at every alignment and length)
    if (!hasLowByte(word)) {
      view.setUint32(n, word, LITTLE_ENDIAN)
      n += 4
      continue
    }
    // Four spaces: indentation, the bulk of a pretty-printed body's whitespace.
    // Stryker disable next-line ConditionalExpression: speed only — the byte-by-byte path strips the same bytes (tests compare with a reference at every alignment and length)
    if (word === 0x20202020) continue
    // Unrolled, each byte written where the next kept byte goes: no branch to mispredict.
    const b0 = body[i] as number
    const b1 = body[i + 1] as number
    const b2 = body[i + 2] as number
    const b3 = body[i + 3] as number
    out[n] = b0
    n += KEEP[b0] as number
    out[n] = b1
    n += KEEP[b1] as number
    out[n] = b2
    n += KEEP[b2] as number
    out[n] = b3
    n += KEEP[b3] as number
  }
  for (; i < body.length; i++) {
    const b = body[i] as number
    out[n] = b
    n += KEEP[b] as number
  }
  return out.subarray(0, n)
}

/**
 * Whether a whitespace byte in `body[from, to)` stands right before a continuation byte
 * (0x80-0xBF) in that range: what taking it out would join into a character (`E4 20 B8 AD`
 * strips to 中). The portable answer to crypto/wasm-strip.ts's `StripReport`, which the kernel
 * gives in its own pass; a pass of its own here, where the stripping is slow anyway.
 */
export function whitespaceJoinsCharacter(body: Uint8Array, from: number, to: number): boolean {
  for (let i = from + 1; i < to; i++) {
    if (((body[i] as number) & 0xc0) === 0x80 && JAVA_WHITESPACE[body[i - 1] as number] === 1) return true
  }
  return false
}
