/**
 * The text the service signs, built from the raw body bytes.
 *
 * The service's published signing code runs Java's `String.replaceAll("\\s+", "")` over Gson's
 * output. Without flags Java's `\s` is exactly `[ \t\n\x0B\f\r]`: six ASCII bytes, which in UTF-8
 * never occur inside a multi-byte sequence, so stripping them from the bytes is the same as
 * stripping them from the decoded text, and the body never has to be decoded.
 */

/** 1 for the six bytes Java's `\s` matches. */
const JAVA_WHITESPACE = new Uint8Array(256)
for (const b of [0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d]) JAVA_WHITESPACE[b] = 1
/** 0 for those six, 1 for every byte that stays: the output position advances by it. */
const KEEP = JAVA_WHITESPACE.map((b) => 1 - b)

/** 1 for ASCII bytes that JavaScript's or Python's `\s` removes on top of Java's six. */
const EXTRA_ASCII_WHITESPACE = new Uint8Array(256)
for (const b of [0x1c, 0x1d, 0x1e, 0x1f]) EXTRA_ASCII_WHITESPACE[b] = 1

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

/**
 * Whether any byte of a 32-bit word is <= 0x20, the range every whitespace byte is in. Exact:
 * a borrow can only start at a byte that is itself below 0x21, and bytes >= 0x80 never flag.
 */
const hasLowByte = (word: number) => ((word - 0x21212121) & ~word & 0x80808080) !== 0

/** The body's 4-byte-aligned middle as words, and where it starts and ends in the body. */
function wordsOf(body: Uint8Array): { words: Uint32Array; start: number; end: number } {
  const start = Math.min((4 - (body.byteOffset % 4)) % 4, body.length)
  const count = (body.length - start) >>> 2
  // A body shorter than its misalignment has no aligned middle, and no view can start there.
  const words = count === 0 ? new Uint32Array(0) : new Uint32Array(body.buffer, body.byteOffset + start, count)
  return { words, start, end: start + count * 4 }
}

/** Index of the first byte Java's `\s` matches at or after `from`, or -1; a word at a time. */
function indexOfJavaWhitespace(body: Uint8Array, from: number): number {
  const { words, start, end } = wordsOf(body)
  let i = from
  for (; i < start && i < body.length; i++) if (JAVA_WHITESPACE[body[i] as number] === 1) return i
  for (let w = (Math.max(i, start) - start) >>> 2; w < words.length; w++) {
    if (!hasLowByte(words[w] as number)) continue
    for (let k = start + w * 4, last = k + 4; k < last; k++) if (k >= i && JAVA_WHITESPACE[body[k] as number] === 1) return k
  }
  for (i = Math.max(i, end); i < body.length; i++) if (JAVA_WHITESPACE[body[i] as number] === 1) return i
  return -1
}

/**
 * Removes exactly what Java's `\s` matches. A body without such bytes is returned as is, not
 * copied; otherwise the result is the one copy made. Words without a byte <= 0x20 (most of a
 * compact body) are copied whole.
 */
export function stripJavaWhitespace(body: Uint8Array): Uint8Array {
  const first = indexOfJavaWhitespace(body, 0)
  if (first === -1) return body
  // Four spare bytes: a whole word may be written where fewer than four remain.
  const out = new Uint8Array(body.length + 4)
  const view = new DataView(out.buffer)
  out.set(body.subarray(0, first))
  let n = first
  const { words, start, end } = wordsOf(body)
  let i = first
  for (; i < body.length && (i < start || i >= end || (i - start) % 4 !== 0); i++) {
    const b = body[i] as number
    out[n] = b
    n += KEEP[b] as number
  }
  for (let w = (i - start) >>> 2; i < end; w++, i += 4) {
    const word = words[w] as number
    if (!hasLowByte(word)) {
      view.setUint32(n, word, LITTLE_ENDIAN)
      n += 4
      continue
    }
    // Four spaces: indentation, the bulk of a pretty-printed body's whitespace.
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

/** How many bytes {@link likelyCanonical} reads at each end and at each point in between. */
const PROBE = 64
/**
 * Bodies up to this size are searched in full, a word at a time: at 1 KiB that costs a tenth of
 * the HMAC, where a wrong guess would cost a whole one.
 */
const SEARCH_IN_FULL = 2048
/** One probe every this many bytes of the middle, and no more than {@link MAX_PROBES}. */
const PROBE_EVERY = 16 * 1024
const MAX_PROBES = 16

/**
 * Whether the body is probably already in canonical form (no Java whitespace), judged from a few
 * samples rather than a full scan, which would cost up to a tenth of the HMAC. A pretty body shows
 * itself in its first bytes; a compact body with spaces in its values shows a space in nearly
 * every window of 64 bytes. Samples are read a word at a time and flag any byte <= 0x20, which in
 * JSON can only be whitespace. A wrong guess costs one extra HMAC, never a wrong verdict.
 */
export function likelyCanonical(body: Uint8Array): boolean {
  if (body.length <= SEARCH_IN_FULL) return indexOfJavaWhitespace(body, 0) === -1
  const { words, start } = wordsOf(body)
  const probes = Math.min(MAX_PROBES, Math.floor(body.length / PROBE_EVERY))
  const stride = Math.floor((body.length - 2 * PROBE) / (probes + 1))
  // The first and last words, then evenly spaced windows between them.
  if (hasLowWordIn(words, 0) || hasLowWordIn(words, words.length - PROBE_WORDS)) return false
  for (let k = 1; k <= probes; k++) if (hasLowWordIn(words, (k * stride - start) >>> 2)) return false
  // The up to three bytes on either side of the aligned middle.
  for (let i = 0; i < start; i++) if (JAVA_WHITESPACE[body[i] as number] === 1) return false
  for (let i = start + words.length * 4; i < body.length; i++) if (JAVA_WHITESPACE[body[i] as number] === 1) return false
  return true
}

const PROBE_WORDS = PROBE / 4

function hasLowWordIn(words: Uint32Array, from: number): boolean {
  for (let w = from, end = from + PROBE_WORDS; w < end; w++) if (hasLowByte(words[w] as number)) return true
  return false
}

/**
 * Length in bytes of a Unicode whitespace character (beyond Java's six) that starts at `i`, or 0.
 * The set is the union of JavaScript's `\s` and Python's `\s`: U+001C–U+001F, U+0085, U+00A0,
 * U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF.
 */
function extraWhitespaceAt(body: Uint8Array, i: number): number {
  const b0 = body[i] as number
  if (b0 < 0x80) return EXTRA_ASCII_WHITESPACE[b0] === 1 ? 1 : 0
  const b1 = body[i + 1]
  if (b0 === 0xc2) return b1 === 0x85 || b1 === 0xa0 ? 2 : 0
  const b2 = body[i + 2]
  switch (b0) {
    case 0xe1:
      return b1 === 0x9a && b2 === 0x80 ? 3 : 0
    case 0xe2:
      if (b1 === 0x80 && b2 !== undefined) {
        return (b2 >= 0x80 && b2 <= 0x8a) || b2 === 0xa8 || b2 === 0xa9 || b2 === 0xaf ? 3 : 0
      }
      return b1 === 0x81 && b2 === 0x9f ? 3 : 0
    case 0xe3:
      return b1 === 0x80 && b2 === 0x80 ? 3 : 0
    case 0xef:
      return b1 === 0xbb && b2 === 0xbf ? 3 : 0
    default:
      return 0
  }
}

/**
 * Removes every Unicode whitespace character, what a sender that stripped with JavaScript's or
 * Python's `\s` signed. `undefined` when the body holds no whitespace beyond Java's six, since
 * the result would then equal {@link stripJavaWhitespace}'s and cost an HMAC for nothing.
 */
export function stripUnicodeWhitespace(body: Uint8Array): Uint8Array | undefined {
  const out = new Uint8Array(body.length)
  let n = 0
  let extra = false
  for (let i = 0; i < body.length; ) {
    const b = body[i] as number
    if (b <= 0x20 && JAVA_WHITESPACE[b] === 1) {
      i++
      continue
    }
    const skip = extraWhitespaceAt(body, i)
    if (skip > 0) {
      extra = true
      i += skip
      continue
    }
    out[n++] = b
    i++
  }
  return extra ? out.subarray(0, n) : undefined
}

/** Gson's default HTML-safe escapes, as UTF-8 bytes of the six-character `\uXXXX` form. */
const GSON_ESCAPES: ReadonlyMap<number, Uint8Array> = new Map(
  [
    [0x3c, '\\u003c'],
    [0x3e, '\\u003e'],
    [0x26, '\\u0026'],
    [0x3d, '\\u003d'],
    [0x27, '\\u0027'],
  ].map(([byte, text]) => [byte as number, new TextEncoder().encode(text as string)]),
)
const U2028 = new TextEncoder().encode('\\u2028')
const U2029 = new TextEncoder().encode('\\u2029')

/**
 * The body as Gson would have written it: `< > & = '` (and U+2028, U+2029) as `\uXXXX` escapes.
 * Covers a sender that signed Gson's output but sent another serialiser's body. These characters
 * can only stand inside JSON strings, where the escape means the same thing. `undefined` when the
 * body holds none of them.
 */
export function escapeLikeGson(body: Uint8Array): Uint8Array | undefined {
  let count = 0
  for (let i = 0; i < body.length; i++) {
    const b = body[i] as number
    if (GSON_ESCAPES.has(b) || isLineSeparatorAt(body, i)) count++
  }
  if (count === 0) return undefined
  const out = new Uint8Array(body.length + count * 5)
  let n = 0
  for (let i = 0; i < body.length; i++) {
    const b = body[i] as number
    const replacement = GSON_ESCAPES.get(b) ?? (isLineSeparatorAt(body, i) ? lineSeparatorEscape(body, i) : undefined)
    if (replacement === undefined) {
      out[n++] = b
      continue
    }
    out.set(replacement, n)
    n += replacement.length
    // U+2028 and U+2029 are three bytes in UTF-8; the escape replaces all of them.
    if (b === 0xe2) i += 2
  }
  return out.subarray(0, n)
}

function isLineSeparatorAt(body: Uint8Array, i: number): boolean {
  return body[i] === 0xe2 && body[i + 1] === 0x80 && (body[i + 2] === 0xa8 || body[i + 2] === 0xa9)
}

function lineSeparatorEscape(body: Uint8Array, i: number): Uint8Array {
  return body[i + 2] === 0xa8 ? U2028 : U2029
}
