/**
 * The texts a signature may have been made over, built from the raw body bytes. The rule lives
 * here; the fast stripping lives behind the platform backend (crypto/*.ts) and strip.ts.
 *
 * The service's published signing code runs Java's `String.replaceAll("\\s+", "")` over Gson's
 * output and signs the result. Without flags Java's `\s` is exactly `[ \t\n\x0B\f\r]`: six ASCII
 * bytes, which in UTF-8 never occur inside a multi-byte sequence, so stripping them from the bytes
 * is the same as stripping them from the decoded text, and the body never has to be decoded.
 *
 * Candidates, in the order the verifier tries them, each only when the ones before failed:
 * 1. the service's own form: Java's six removed (the body itself when it has none);
 * 2. only with `unicodeWhitespace: true`: every Unicode whitespace removed ({@link stripUnicodeWhitespace});
 * 3. Gson's HTML escapes applied, Java's six removed ({@link gsonCandidate}).
 * Each later candidate is made only where it differs from the first, and is bounded in size, so an
 * unauthenticated request costs a small multiple of one HMAC over its body, whatever it holds.
 */

/** 1 for the six bytes Java's `\s` matches. */
export const JAVA_WHITESPACE = new Uint8Array(256)
for (const b of [0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d]) JAVA_WHITESPACE[b] = 1

/** 1 for ASCII bytes that JavaScript's or Python's `\s` removes on top of Java's six. */
const EXTRA_ASCII_WHITESPACE = new Uint8Array(256)
for (const b of [0x1c, 0x1d, 0x1e, 0x1f]) EXTRA_ASCII_WHITESPACE[b] = 1

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
 * the result would then be the service's own form and cost an HMAC for nothing.
 *
 * Off by default in the verifier: the service's Java strip never produces this form, and accepting
 * it lets anyone holding one signed delivery insert invisible characters into its strings.
 */
export function stripUnicodeWhitespace(body: Uint8Array): Uint8Array | undefined {
  let i = 0
  // Nothing is copied until the first character that makes a difference.
  while (i < body.length && extraWhitespaceAt(body, i) === 0) i++
  if (i === body.length) return undefined
  const out = new Uint8Array(body.length)
  let n = 0
  for (let k = 0; k < i; k++) {
    const b = body[k] as number
    if (JAVA_WHITESPACE[b] === 0) out[n++] = b
  }
  while (i < body.length) {
    const b = body[i] as number
    if (JAVA_WHITESPACE[b] === 1) {
      i++
      continue
    }
    const skip = extraWhitespaceAt(body, i)
    if (skip > 0) {
      i += skip
      continue
    }
    out[n++] = b
    i++
  }
  return out.subarray(0, n)
}

/** Gson's default HTML-safe escapes: the byte, and its six-character `\uXXXX` form's last four. */
const GSON_ESCAPED = new Uint8Array(256)
const GSON_HEX: string[] = []
for (const [byte, hex] of [
  [0x3c, '003c'],
  [0x3e, '003e'],
  [0x26, '0026'],
  [0x3d, '003d'],
  [0x27, '0027'],
] as const) {
  GSON_ESCAPED[byte] = 1
  GSON_HEX[byte] = hex
}
const encoder = new TextEncoder()
const ESCAPES: Uint8Array[] = []
for (const [byte, hex] of GSON_HEX.entries()) if (hex !== undefined) ESCAPES[byte] = encoder.encode(`\\u${hex}`)
const U2028 = encoder.encode('\\u2028')
const U2029 = encoder.encode('\\u2029')

/** U+2028 or U+2029 (`E2 80 A8` / `E2 80 A9`), which Gson escapes in every mode. */
function lineSeparatorAt(body: Uint8Array, i: number): Uint8Array | undefined {
  if (body[i] !== 0xe2 || body[i + 1] !== 0x80) return undefined
  const b2 = body[i + 2]
  return b2 === 0xa8 ? U2028 : b2 === 0xa9 ? U2029 : undefined
}

/**
 * The body as Gson would have written it: `< > & = '` (and U+2028, U+2029) as `\uXXXX` escapes.
 * For a sender that signed Gson's output but sent another serialiser's body. These characters can
 * only stand inside JSON strings, where the escape means the same thing. `undefined` when the body
 * holds none of them. This is the emulator's serialiser too, so it keeps whitespace.
 */
export function escapeLikeGson(body: Uint8Array): Uint8Array | undefined {
  return withGsonEscapes(body, false, Number.POSITIVE_INFINITY)
}

/**
 * The escapes Gson's output could hold at most for the fallback to be tried: a fifth of the body,
 * so the escaped text (six bytes for each) is at most twice the body, and a body of `<` cannot
 * make the verifier hash six times its size. A genuine body that escapes more than that is not
 * a Gson body sent by another serialiser, but something else.
 */
const MAX_ESCAPED_SHARE = 5

/**
 * Candidate 3: Gson's escapes applied and Java's whitespace removed in one pass (the two commute:
 * no escape holds whitespace, and no whitespace is escaped). `undefined` when nothing would be
 * escaped, or too much would (see {@link MAX_ESCAPED_SHARE}).
 */
export function gsonCandidate(body: Uint8Array): Uint8Array | undefined {
  return withGsonEscapes(body, true, Math.floor(body.length / MAX_ESCAPED_SHARE))
}

function withGsonEscapes(body: Uint8Array, stripWhitespace: boolean, maxEscapes: number): Uint8Array | undefined {
  let count = 0
  for (let i = 0; i < body.length; i++) {
    const b = body[i] as number
    if (GSON_ESCAPED[b] === 1 || (b === 0xe2 && lineSeparatorAt(body, i) !== undefined)) {
      // A count over the bound is known before the whole body is read.
      if (++count > maxEscapes) return undefined
    }
  }
  if (count === 0) return undefined
  const out = new Uint8Array(body.length + count * 5)
  let n = 0
  for (let i = 0; i < body.length; i++) {
    const b = body[i] as number
    if (stripWhitespace && JAVA_WHITESPACE[b] === 1) continue
    const replacement = GSON_ESCAPED[b] === 1 ? ESCAPES[b] : b === 0xe2 ? lineSeparatorAt(body, i) : undefined
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
