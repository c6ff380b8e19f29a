import { backend } from '#crypto'
import { containsAnyByte, fromHex, isUtf8Bytes, toBytes, toHex } from './bytes.ts'
import { gsonCandidate, MAX_GSON_FALLBACK_BODY, maxGsonEscapes, mayHaveGsonForm, unicodeCandidate } from './canonical.ts'
import { timingSafeEqual } from './constant-time.ts'
import type { CanonicalReport, HmacKey } from './crypto/types.ts'
import { keyFor } from './hmac-keys.ts'
import { whitespaceJoinsCharacter } from './strip.ts'

const DIGEST_HEX_LENGTH = 64

/**
 * The hex signature the service sends for this JSON text: HMAC-SHA256, keyed with the UTF-8
 * secret, over the text with Java's whitespace removed.
 *
 * @example
 * const signature = await sign('{"event": "ping"}', 'whsec-…')
 */
export async function sign(body: string | Uint8Array, secret: string): Promise<string> {
  // Stryker disable next-line StringLiteral: message text only — the caller's name in the TypeError
  assertSecret(secret, 'sign')
  const [digest] = await backend.canonicalHmac([await keyFor(secret)], toBytes(body))
  return toHex(digest as Uint8Array)
}

export interface VerifySignatureOptions {
  /**
   * Also accept a signature over the body with every Unicode whitespace removed (what JavaScript's
   * or Python's `\s` removes: U+00A0, U+3000, U+FEFF, U+2028…), for a sender that strips that
   * way. Default `false`: the service's Java code never signs that form, and accepting it lets
   * anyone holding one signed delivery insert invisible characters into its strings.
   */
  unicodeWhitespace?: boolean
}

/**
 * Whether `header` holds a signature of `body` by any of `secrets`.
 *
 * The body is the raw bytes received; bytes that are not valid UTF-8 verify only as they were
 * signed, byte for byte, never through a text made by taking whitespace out of them. The
 * service's own canonical form (Java's whitespace removed) is tried first; only if it fails, and
 * only where they would differ from it, the compatibility forms follow: every Unicode whitespace
 * removed (only with `unicodeWhitespace: true`), then Gson's HTML escapes applied. A signature
 * over the body with its whitespace is never accepted. The header may hold several
 * comma-separated hex values of either case. Resolves `false` for any mismatch or malformed header.
 *
 * @example
 * const ok = await verifySignature(rawBody, req.headers['x-service-hmac-signature'], process.env.WEBHOOK_SECRET ?? '')
 */
export async function verifySignature(
  body: string | Uint8Array,
  header: string | null | undefined,
  secrets: string | readonly string[],
  options: VerifySignatureOptions = {},
): Promise<boolean> {
  return (await matchSignature(body, header, secrets, options)) !== undefined
}

/** Which text a signature was made over: the service's own form, or a compatibility form. */
export type CanonicalForm = 'service' | 'unicode' | 'gson'

/** The form a signature matched; for a compatibility form, also its text (the delivery's fingerprint is its hash). */
export type SignatureMatch = { form: 'service' } | { form: 'unicode' | 'gson'; text: Uint8Array; key: number }

/** {@link verifySignature}, saying which form matched: `undefined` when none did. */
export async function matchSignature(
  body: string | Uint8Array,
  header: string | null | undefined,
  secrets: string | readonly string[],
  { unicodeWhitespace = false }: VerifySignatureOptions = {},
): Promise<SignatureMatch | undefined> {
  const list = typeof secrets === 'string' ? [secrets] : secrets
  if (!Array.isArray(list) || list.length === 0)
    throw new TypeError('@hookguard/core: verifySignature needs a secret or a non-empty list of them')
  // Stryker disable next-line StringLiteral: message text only — the caller's name in the TypeError
  for (const secret of list) assertSecret(secret, 'verifySignature')

  const expected = parseSignatureHeader(header)
  // Stryker disable next-line ConditionalExpression: speed only — with no digest in the header the HMACs find no match either (→ true is killed)
  if (expected.length === 0) return undefined
  const raw = toBytes(body)
  // importKeys written out, as the receiver writes this match out: each async call more costs a
  // 1 KiB verification a few percent (see docs/benchmarks.md, notes).
  // Stryker disable next-line ConditionalExpression: speed only — Promise.all over one secret imports the same key (→ true is killed)
  const keys = list.length === 1 ? [await keyFor(list[0] as string)] : await Promise.all(list.map(keyFor))
  // The candidates in the protocol's order (see canonical.ts): the service's own form, exact (the
  // body is hashed as received only when it holds none of Java's six whitespace bytes), then the
  // compatibility forms.
  const told: CanonicalReport = { stripped: false, joins: false }
  const digests = serviceDigests(keys, raw, told)
  const match = matchesAny(Array.isArray(digests) ? digests : await digests, expected)
    ? SERVICE_FORM
    : await matchCompatibilityForms(raw, expected, keys, unicodeWhitespace)
  // A string was UTF-8 encoded here: nothing taken out of it joins anything.
  return match !== undefined && typeof body !== 'string' && joinsCharacters(match, told, raw) ? undefined : match
}

/**
 * Whether the text a signature matched was made by taking bytes out of `raw` that joined what was
 * left into a character nobody signed (`E4 20 B8 AD` is 中 once its space is gone), which a
 * lenient decoder then shows: such a match does not stand. Java's whitespace is one byte, and
 * taking one out joins bytes only where a continuation byte follows it, which never happens in
 * UTF-8; the kernel tells that in the pass it strips with, and only the JavaScript stripper leaves
 * it to be asked here, once a signature matched. Any other body reads, under a lenient decoder, as
 * the signed text with whitespace between its characters. The compatibility forms take characters
 * of several bytes out, so there the body must be UTF-8. A body hashed as it came (every compact
 * delivery) was signed as it is. `verifySignature` and the receiver both ask this.
 */
export function joinsCharacters(match: SignatureMatch, told: CanonicalReport, raw: Uint8Array): boolean {
  if (match.form !== 'service') return !isUtf8Bytes(raw)
  return told.stripped && (told.joins ?? whitespaceJoinsCharacter(raw, 0, raw.length))
}

/**
 * The HMAC keys of checked secrets. One secret is the usual case, and awaiting it alone is
 * cheaper than `Promise.all`. A receiver imports its fixed secrets once, at setup.
 */
export async function importKeys(secrets: readonly string[]): Promise<HmacKey[]> {
  // Stryker disable next-line ConditionalExpression: speed only — Promise.all over one secret imports the same key (→ true is killed)
  return secrets.length === 1 ? [await keyFor(secrets[0] as string)] : Promise.all(secrets.map(keyFor))
}

/**
 * The HMACs of the service's own form, one per key: at once where the platform hashes
 * synchronously (Node), so that the caller awaits only where it must (an array is the sign).
 */
export function serviceDigests(keys: readonly HmacKey[], body: Uint8Array, told?: CanonicalReport): Uint8Array[] | Promise<Uint8Array[]> {
  const now = backend.canonicalHmacSync
  return now === undefined ? backend.canonicalHmac(keys, body, told) : now(keys, body, told)
}

/** The forms tried only once the service's own has failed, each only where it differs from it. */
export async function matchCompatibilityForms(
  raw: Uint8Array,
  expected: readonly Uint8Array[],
  keys: readonly HmacKey[],
  unicodeWhitespace: boolean,
): Promise<SignatureMatch | undefined> {
  if (unicodeWhitespace) {
    const text = unicodeCandidate(raw, backend.unicodeText)
    const key = text === undefined ? -1 : matchingKey(await backend.hmac(keys, text), expected)
    if (key >= 0) return { form: 'unicode', text: text as Uint8Array, key }
  }
  if (backend.gsonHmacSync !== undefined) return matchGsonFormNow(raw, expected, keys, backend.gsonHmacSync)
  if (backend.gsonHmac !== undefined) {
    // Only the size bound first: where hashing is asynchronous the platform has no native search
    // that is cheaper than the kernel's own pass, which finds nothing to escape just as well.
    if (raw.length > MAX_GSON_FALLBACK_BODY) return undefined
    const made = await backend.gsonHmac(keys, raw, maxGsonEscapes(raw))
    const key = made === undefined ? -1 : matchingKey(made.digests, expected)
    return key >= 0 ? { form: 'gson', text: (made as { text: Uint8Array }).text, key } : undefined
  }
  const escaped = gsonCandidate(raw)
  const key = escaped === undefined ? -1 : matchingKey(await backend.hmac(keys, escaped), expected)
  if (key >= 0) return { form: 'gson', text: escaped as Uint8Array, key }
  return undefined
}

/**
 * Candidate 3 through the platform's faster pass, with the same bounds as {@link gsonCandidate}.
 * Its text may be a view of the backend's scratch memory, which the backend's next call (another
 * request's, after any `await`) overwrites: so it is compared and, on a match, copied here, with
 * no `await` in between. A refusal copies nothing.
 */
function matchGsonFormNow(
  raw: Uint8Array,
  expected: readonly Uint8Array[],
  keys: readonly HmacKey[],
  gsonHmac: NonNullable<typeof backend.gsonHmacSync>,
): SignatureMatch | undefined {
  if (!mayHaveGsonForm(raw)) return undefined
  const made = gsonHmac(keys, raw, maxGsonEscapes(raw))
  const key = made === undefined ? -1 : matchingKey(made.digests, expected)
  if (key >= 0) return { form: 'gson', text: (made as { text: Uint8Array }).text.slice(), key }
  return undefined
}

export const SERVICE_FORM: SignatureMatch = { form: 'service' }

/**
 * Why a signature may have failed, for the receiver's owner (an event, never the answer): what
 * people need when "the signature does not match". Only facts about the header, the configured
 * secrets and the shape of the body; none of them is echoed.
 */
export type SignatureHint = 'header_not_hex' | 'header_wrong_length' | 'secret_whitespace' | 'body_not_gson'

/**
 * The likeliest {@link SignatureHint} for a signature that matched no form, if any. `expected` is
 * what {@link parseSignatureHeader} read of `header`: the header is not split again, which for a
 * header of a thousand commas cost as much again as the refusal itself.
 */
export function signatureHint(
  header: string,
  expected: readonly Uint8Array[],
  secrets: readonly string[],
  body: Uint8Array,
): SignatureHint | undefined {
  // No 64-digit hex value in it (or too long to be read): is any of its values, trimmed, not hex?
  if (expected.length === 0) {
    return header.length <= MAX_SIGNATURE_HEADER_LENGTH && NOT_HEX_VALUE.test(header) ? 'header_not_hex' : 'header_wrong_length'
  }
  if (secrets.some((secret) => SURROUNDING_WHITESPACE.test(secret))) return 'secret_whitespace'
  // The service writes its JSON with Gson, which escapes these: a body that holds them as they are
  // was written, or rewritten, by something else (a parser ran first and the body was re-serialised).
  // Looked for in the first 16 KiB only (deliveries are a few KiB): a hint, not a verdict, and on
  // the Web build a scan in JavaScript of a 64 KiB body cost about three `sign`s of it.
  if (containsAnyByte(body.subarray(0, HINT_SCAN_MAX), GSON_UNESCAPED)) return 'body_not_gson'
  return undefined
}

/**
 * A header's comma-separated values, each trimmed, hold a character that is not a hex digit: one
 * that is neither a comma nor whitespace, or whitespace inside a value (between two characters of
 * it). `\s` is what `String#trim` removes. Linear: a run of whitespace is tried from the one
 * character before it.
 */
const NOT_HEX_VALUE = /[^0-9a-f,\s]|[^,\s]\s+[^,\s]/i

/** A secret pasted with a space or newline around it: a frequent reason for a mismatch. */
const SURROUNDING_WHITESPACE = /^\s|\s$/

/** How much of a refused body the `body_not_gson` hint reads. */
const HINT_SCAN_MAX = 16 * 1024

/** `< > & = '` as Gson never writes them inside its output. */
const GSON_UNESCAPED = [0x3c, 0x3e, 0x26, 0x3d, 0x27]

/** Whether any digest (one per secret) is any value the header holds. */
export function matchesAny(digests: readonly Uint8Array[], expected: readonly Uint8Array[]): boolean {
  return matchingKey(digests, expected) >= 0
}

/** Which digest (one per secret, so which secret) is a value the header holds; -1 for none. */
export function matchingKey(digests: readonly Uint8Array[], expected: readonly Uint8Array[]): number {
  for (let key = 0; key < digests.length; key++) {
    for (const candidate of expected) if (timingSafeEqual(digests[key] as Uint8Array, candidate)) return key
  }
  return -1
}

/**
 * The longest signature header that is read: room for a dozen values, where the service sends one
 * and a sender rotating secrets two. A longer one holds no digest: splitting tens of thousands of
 * empty values cost a hundred HMACs of a small body, for a header any client may send.
 */
export const MAX_SIGNATURE_HEADER_LENGTH = 1024

/**
 * The 32-byte digests a header holds; values that are not 64 hex digits are dropped, and a header
 * longer than {@link MAX_SIGNATURE_HEADER_LENGTH} holds none.
 */
export function parseSignatureHeader(header: string | null | undefined): Uint8Array[] {
  // Stryker disable next-line ArrayDeclaration: equivalent — a string entry never equals a 32-byte digest
  if (!header || header.length > MAX_SIGNATURE_HEADER_LENGTH) return []
  // The service sends one value: no list to split and build.
  // Stryker disable next-line ConditionalExpression,BlockStatement: speed only — splitting one value at commas yields that value (→ true is killed)
  if (header.length === DIGEST_HEX_LENGTH) {
    const digest = fromHex(header)
    // Stryker disable next-line ArrayDeclaration: equivalent — a string entry never equals a 32-byte digest
    return digest === undefined ? [] : [digest]
  }
  // Stryker disable next-line ArrayDeclaration: equivalent — a string entry never equals a 32-byte digest
  const digests: Uint8Array[] = []
  // Value by value between commas, and only a value long enough to hold a digest is cut out and
  // trimmed: a header of a thousand commas makes no string, where splitting it made a thousand.
  for (let start = 0; start <= header.length; ) {
    const comma = header.indexOf(',', start)
    const end = comma === -1 ? header.length : comma
    // Stryker disable next-line ConditionalExpression: speed only — a shorter value trims to fewer than 64 digits, which are dropped below (→ true is equivalent)
    if (end - start >= DIGEST_HEX_LENGTH) {
      const value = header.slice(start, end).trim()
      const digest = value.length === DIGEST_HEX_LENGTH ? fromHex(value) : undefined
      if (digest !== undefined) digests.push(digest)
    }
    start = end + 1
  }
  return digests
}

function assertSecret(secret: unknown, caller: string): asserts secret is string {
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new TypeError(`@hookguard/core: ${caller} needs a non-empty secret string`)
  }
}
