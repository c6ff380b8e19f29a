import { containsAnyByte } from './bytes.ts'

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
 * 2. only with `unicodeWhitespace: true`: every Unicode whitespace removed, for bodies up to 16 KiB ({@link unicodeCandidate});
 * 3. Gson's HTML escapes applied, Java's six removed, for bodies up to 64 KiB ({@link gsonCandidate}).
 * Each later candidate is made only where it differs from the first, and is bounded in size, so an
 * unauthenticated request costs a small multiple of one HMAC over its body, whatever it holds.
 */

/** 1 for the six bytes Java's `\s` matches. */
export const JAVA_WHITESPACE = new Uint8Array(256)
for (const b of [0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d]) JAVA_WHITESPACE[b] = 1

/**
 * The set, as tables. The WebAssembly kernel (strip.wat, `unicode`) spells the same set out in
 * comparisons, 16 bytes at a time; its test holds it to these tables on every pair of bytes.
 *
 * What a byte and the one after it begin: 0 no whitespace; 1 one of Java's six; 2 a one-byte
 * character beyond them (U+001C–U+001F), 3 a two-byte one (U+0085, U+00A0), whatever follows;
 * from 4, a three-byte one if the third byte fits (`starts`, at the kind's row).
 * Beyond Java's six, the set is the union of JavaScript's `\s` and Python's `\s`: U+001C–U+001F,
 * U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF. One or
 * two look-ups a byte, whatever the byte: a comparison per lead byte made a body of lead bytes
 * that begin nothing (`E2 E2 …`) cost 12 to 17 HMACs of it at 64 KiB, and one of U+001C 9 to 12.
 */
interface WhitespaceTables {
  /** A pair's kind, at `b0 << 8 | b1`. */
  pairs: Uint8Array
  /**
   * At `kind << 8 | b2`: the length of the whitespace character that begins with the pair and
   * `b2` (0 to 3), plus {@link BEYOND_JAVA} when it is not one of Java's six; 0 where a three-byte
   * kind's third byte ends none.
   */
  starts: Uint8Array
}

const JAVA = 1
const ONE_BYTE = 2
const TWO_BYTES = 3
const THREE_BYTES = 4
const BEYOND_JAVA = 4

/** The lead pairs of the three-byte characters, each with the third bytes that end one. */
const THREE_BYTE_CHARACTERS: [number, number[]][] = [
  [0xe19a, [0x80]],
  [0xe280, [0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0xa8, 0xa9, 0xaf]],
  [0xe281, [0x9f]],
  [0xe380, [0x80]],
  [0xefbb, [0xbf]],
]

let tables: WhitespaceTables | undefined

function whitespaceTables(): WhitespaceTables {
  if (tables !== undefined) return tables
  const pairs = new Uint8Array(0x10000)
  const first = (b0: number, kind: number) => pairs.fill(kind, b0 << 8, (b0 + 1) << 8)
  for (let b0 = 0; b0 < 0x100; b0++) if (JAVA_WHITESPACE[b0] === 1) first(b0, JAVA)
  for (let b0 = 0x1c; b0 <= 0x1f; b0++) first(b0, ONE_BYTE)
  pairs[0xc285] = TWO_BYTES
  pairs[0xc2a0] = TWO_BYTES
  const starts = new Uint8Array((THREE_BYTES + THREE_BYTE_CHARACTERS.length) << 8)
  const row = (kind: number, value: number) => starts.fill(value, kind << 8, (kind + 1) << 8)
  row(JAVA, 1)
  row(ONE_BYTE, 1 | BEYOND_JAVA)
  row(TWO_BYTES, 2 | BEYOND_JAVA)
  THREE_BYTE_CHARACTERS.forEach(([pair, ends], at) => {
    pairs[pair] = THREE_BYTES + at
    for (const end of ends) starts[((THREE_BYTES + at) << 8) | end] = 3 | BEYOND_JAVA
  })
  tables = { pairs, starts }
  return tables
}

/**
 * Removes every Unicode whitespace character, what a sender that stripped with JavaScript's or
 * Python's `\s` signed. `undefined` when the body holds no whitespace beyond Java's six, since
 * the result would then be the service's own form and cost an HMAC for nothing.
 *
 * Off by default in the verifier: the service's Java strip never produces this form, and accepting
 * it lets anyone holding one signed delivery insert invisible characters into its strings.
 *
 * The portable pass: where a WebAssembly module can be had, the verifier makes the same text with
 * the kernel (strip.wat, `unicode`), 16 bytes at a time with no branch on the bytes: about one
 * HMAC of the body or less. This one's branches mispredict on a body whose bytes mix kinds at
 * random: six to seven HMACs of it at 16 KiB.
 */
export function stripUnicodeWhitespace(input: Uint8Array): Uint8Array | undefined {
  const { pairs, starts } = whitespaceTables()
  const length = input.length
  // Read from a copy with two spaces after the body, so that every byte has two after it to be
  // looked up with and no read leaves the array (a space ends nothing the bytes before it begin).
  const body = new Uint8Array(length + 2)
  body.set(input)
  body[length] = 0x20
  body[length + 1] = 0x20
  let i = 0
  // Nothing is written until the first character that makes a difference.
  for (; i < length; i++) {
    const kind = pairs[((body[i] as number) << 8) | (body[i + 1] as number)] as number
    if (kind > JAVA && (kind < THREE_BYTES || starts[(kind << 8) | (body[i + 2] as number)] !== 0)) break
  }
  if (i === length) return undefined
  const out = new Uint8Array(length)
  let n = 0
  for (let k = 0; k < i; k++) {
    const b = body[k] as number
    if (JAVA_WHITESPACE[b] === 0) out[n++] = b
  }
  while (i < length) {
    const b0 = body[i] as number
    const kind = pairs[(b0 << 8) | (body[i + 1] as number)] as number
    if (kind === 0 || (kind >= THREE_BYTES && starts[(kind << 8) | (body[i + 2] as number)] === 0)) {
      out[n++] = b0
      i++
    } else i += kind <= ONE_BYTE ? 1 : kind === TWO_BYTES ? 2 : 3
  }
  return out.subarray(0, n)
}

/**
 * Candidate 2 (only with `unicodeWhitespace: true`): {@link stripUnicodeWhitespace}, or the
 * platform's faster pass that makes the same text (`strip`), for bodies up to
 * {@link MAX_UNICODE_FALLBACK_BODY}.
 */
export function unicodeCandidate(
  body: Uint8Array,
  strip: (body: Uint8Array) => Uint8Array | undefined = stripUnicodeWhitespace,
): Uint8Array | undefined {
  return body.length > MAX_UNICODE_FALLBACK_BODY ? undefined : strip(body)
}

/**
 * The largest body the Unicode-whitespace fallback is tried on, as the Gson one is bounded: its
 * form is a pass over every byte, about one HMAC of the same bytes or less by the WebAssembly
 * kernel, which with the forms and HMACs around it reads about 7 to 9 HMACs of a refused body (a
 * body mixing every scanned byte at random, at 16 KiB); docs/security.md states 12 for the option.
 * Bounded so that a large body never pays it: the senders it is for send deliveries of a few KiB
 * (docs/benchmarks.md).
 */
export const MAX_UNICODE_FALLBACK_BODY = 16 * 1024

/** Gson's default HTML-safe escapes: `< > & = '` as `\u003c`…, and U+2028/U+2029 (`E2 80 A8/A9`). */
const GSON_HEX = new Map([
  [0x3c, '3c'],
  [0x3e, '3e'],
  [0x26, '26'],
  [0x3d, '3d'],
  [0x27, '27'],
])
/** Per byte: 0 copied, 1 removed (Java whitespace, when stripping), 2 escaped, 3 maybe U+2028/9. */
const COPY = 0
const REMOVE = 1
const ESCAPE = 2
const LINE_SEPARATOR_LEAD = 3
const KIND = new Uint8Array(256)
for (const byte of GSON_HEX.keys()) KIND[byte] = ESCAPE
KIND[0xe2] = LINE_SEPARATOR_LEAD
/** The two hex digits each escape ends with, as character codes. */
const HEX_HIGH = new Uint8Array(256)
const HEX_LOW = new Uint8Array(256)
for (const [byte, hex] of GSON_HEX) {
  HEX_HIGH[byte] = hex.charCodeAt(0)
  HEX_LOW[byte] = hex.charCodeAt(1)
}

function isLineSeparatorAt(body: Uint8Array, i: number): boolean {
  return body[i + 1] === 0x80 && (body[i + 2] === 0xa8 || body[i + 2] === 0xa9)
}

/** How many escapes Gson would write for the body. */
function countEscapes(body: Uint8Array): number {
  let count = 0
  for (let i = 0; i < body.length; i++) {
    const kind = KIND[body[i] as number]
    if (kind === ESCAPE || (kind === LINE_SEPARATOR_LEAD && isLineSeparatorAt(body, i))) count++
  }
  return count
}

/**
 * The body as Gson would have written it: `< > & = '` (and U+2028, U+2029) as `\uXXXX` escapes.
 * For a sender that signed Gson's output but sent another serialiser's body. These characters can
 * only stand inside JSON strings, where the escape means the same thing. `undefined` when the body
 * holds none of them. This is the emulator's serialiser too, so it keeps whitespace.
 */
export function escapeLikeGson(body: Uint8Array): Uint8Array | undefined {
  const bytes = plain(body)
  return withGsonEscapes(bytes, false, countEscapes(bytes))
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
  if (body.length > MAX_GSON_FALLBACK_BODY) return undefined
  return gsonText(plain(body), maxGsonEscapes(body))
}

/**
 * Whether candidate 3 may exist for the body: within {@link MAX_GSON_FALLBACK_BODY}, and holding
 * a byte that starts something Gson escapes. What a platform's faster pass is asked only after.
 */
export function mayHaveGsonForm(body: Uint8Array): boolean {
  return body.length <= MAX_GSON_FALLBACK_BODY && holdsGsonEscapable(plain(body))
}

/** The most escapes candidate 3 may hold for this body (see {@link MAX_ESCAPED_SHARE}). */
export function maxGsonEscapes(body: Uint8Array): number {
  return Math.floor(body.length / MAX_ESCAPED_SHARE)
}

/**
 * Candidate 3's text without the size bound: Gson's escapes applied and Java's whitespace
 * removed, `undefined` when nothing would be escaped or more than `maxEscapes` would. The portable
 * pass, which the Node build's WebAssembly kernel (crypto/strip.wat, `gson`) must match byte for
 * byte; the Node build falls back to it where WebAssembly is unavailable.
 */
export function gsonText(body: Uint8Array, maxEscapes: number): Uint8Array | undefined {
  return withGsonEscapes(plain(body), true, maxEscapes)
}

/**
 * The largest body the Gson fallback is tried on. Building the escaped text is a JavaScript pass
 * over every byte, several HMACs' worth of time (on the Node build a WebAssembly pass, about one),
 * so without a bound an unauthenticated 1 MiB body of escapes costs that much each time; the
 * fallback is for a misconfigured sender's deliveries, which are a few KiB, and the service's own
 * sender never needs it (docs/benchmarks.md).
 */
export const MAX_GSON_FALLBACK_BODY = 64 * 1024

/** The kind of each byte when Java's whitespace is removed as well. */
const KIND_STRIPPING = KIND.map((kind, byte) => (JAVA_WHITESPACE[byte] === 1 ? REMOVE : kind))

/** The bytes that start something Gson escapes: `< > & = '`, and E2, the lead byte of U+2028/9. */
const GSON_FIRST_BYTES = [...GSON_HEX.keys(), 0xe2]

/**
 * Whether the body may hold something Gson escapes, told by the platform's fastest searches: a
 * byte that starts one. E2 also starts the curly quotes, dashes and ellipsis of ordinary text,
 * which have nothing to escape: the pass that follows tells those apart, in time linear in the
 * body. A native search for U+2028/9 whole, which spared such text that pass, restarted at every
 * byte of a body of E2, or of `E2 80` pairs: up to twenty HMACs of the body (docs/benchmarks.md).
 * Only a refused signature gets here, so ordinary text pays this pass only when it is refused.
 */
function holdsGsonEscapable(body: Uint8Array): boolean {
  return containsAnyByte(body, GSON_FIRST_BYTES)
}

/**
 * The body with Gson's escapes, and Java's whitespace removed when `stripWhitespace`; `undefined`
 * when it needs no escape or more than `maxEscapes`. One pass that escapes and counts at once,
 * into room for `maxEscapes`: a count made first, then the text, was two passes over a hostile
 * body, and together more than three times the cost of this one.
 */
function withGsonEscapes(body: Uint8Array, stripWhitespace: boolean, maxEscapes: number): Uint8Array | undefined {
  // Most bodies hold none of them, hostile ones included: told by the platform's fastest search.
  // Stryker disable next-line ConditionalExpression: speed only — without any of them the count is 0, and nothing is made
  if (!holdsGsonEscapable(body)) return undefined
  const kinds = stripWhitespace ? KIND_STRIPPING : KIND
  const out = new Uint8Array(body.length + maxEscapes * 5)
  let n = 0
  let escapes = 0
  const length = body.length
  for (let i = 0; i < length; i++) {
    const b = body[i] as number
    const kind = kinds[b] as number
    if (kind === COPY) {
      out[n++] = b
    } else if (kind === ESCAPE) {
      if (++escapes > maxEscapes) return undefined
      // Six stores rather than a TypedArray#set per escape: a call per escape is what made a body
      // of escapes cost many HMACs.
      out[n] = 0x5c
      out[n + 1] = 0x75
      out[n + 2] = 0x30
      out[n + 3] = 0x30
      out[n + 4] = HEX_HIGH[b] as number
      out[n + 5] = HEX_LOW[b] as number
      n += 6
    } else if (kind === LINE_SEPARATOR_LEAD) {
      if (!isLineSeparatorAt(body, i)) {
        out[n++] = b
        continue
      }
      if (++escapes > maxEscapes) return undefined
      // U+2028 and U+2029 are three bytes in UTF-8; the escape replaces all of them.
      out[n] = 0x5c
      out[n + 1] = 0x75
      out[n + 2] = 0x32
      out[n + 3] = 0x30
      out[n + 4] = 0x32
      out[n + 5] = body[i + 2] === 0xa8 ? 0x38 : 0x39
      n += 6
      i += 2
    }
    // REMOVE: nothing written.
  }
  // Stryker disable next-line EqualityOperator: speed only — with no escape the text made is the service's form: one more HMAC, the same verdict
  return escapes === 0 ? undefined : out.subarray(0, n)
}

/**
 * The same bytes as a plain `Uint8Array`: a Node `Buffer` is a subclass, and loops that see both
 * kinds of array lose V8's fast element access (a server under attack sees both).
 */
function plain(body: Uint8Array): Uint8Array {
  // Stryker disable next-line ConditionalExpression: speed only — a view of the same bytes either way
  return body.constructor === Uint8Array ? body : new Uint8Array(body.buffer, body.byteOffset, body.byteLength)
}
