import { fromHex, toBytes, toHex } from './bytes.ts'
import { escapeLikeGson, likelyCanonical, stripJavaWhitespace, stripUnicodeWhitespace } from './canonical.ts'
import { timingSafeEqual } from './constant-time.ts'
import type { HmacKey } from './crypto/types.ts'
import { hmacSha256, keyFor, stripForHashing } from './hmac.ts'

/** The header the service puts its signature in. */
export const DEFAULT_SIGNATURE_HEADER = 'X-Service-Hmac-Signature'

const DIGEST_HEX_LENGTH = 64

/**
 * The hex signature the service sends for this JSON text: HMAC-SHA256, keyed with the UTF-8
 * secret, over the text with Java's whitespace removed.
 *
 * @example
 * const signature = await sign('{"event": "ping"}', 'whsec-…')
 */
export async function sign(body: string | Uint8Array, secret: string): Promise<string> {
  assertSecret(secret, 'sign')
  const digest = await hmacSha256(await keyFor(secret), stripJavaWhitespace(toBytes(body)))
  return toHex(digest)
}

/**
 * Whether `header` holds a signature of `body` by any of `secrets`.
 *
 * The body is the raw bytes received. The service's own canonical form is tried first; only if it
 * fails, and only when they would differ from it, two compatibility forms follow: every Unicode
 * whitespace removed, and Gson's HTML escapes applied. The header may hold several
 * comma-separated hex values of either case. Resolves `false` for any mismatch or malformed header.
 */
export async function verifySignature(
  body: string | Uint8Array,
  header: string | null | undefined,
  secrets: string | readonly string[],
): Promise<boolean> {
  const list = typeof secrets === 'string' ? [secrets] : secrets
  if (list.length === 0) throw new TypeError('@hookguard/core: verifySignature needs at least one secret')
  for (const secret of list) assertSecret(secret, 'verifySignature')

  const expected = parseSignatureHeader(header)
  if (expected.length === 0) return false

  const raw = toBytes(body)
  const keys: HmacKey[] = []
  for (const secret of list) {
    const key = keyFor(secret)
    keys.push(key instanceof Promise ? await key : key)
  }
  // The likely case first and without a generator, a promise or an array in its way: at 1 KiB
  // these cost a third of the HMAC.
  const asReceived = likelyCanonical(raw)
  if (asReceived) {
    const matched = signedBy(raw, keys, expected)
    if (matched === true || (matched !== false && (await matched))) return true
  }
  for (const text of fallbacks(raw, asReceived)) {
    const matched = signedBy(text, keys, expected)
    if (matched === true || (matched !== false && (await matched))) return true
  }
  return false
}

/** Whether `text` was signed by any of `keys`; synchronous where the platform hashes synchronously. */
function signedBy(text: Uint8Array, keys: readonly HmacKey[], expected: readonly Uint8Array[]): boolean | Promise<boolean> {
  for (let k = 0; k < keys.length; k++) {
    const digest = hmacSha256(keys[k] as HmacKey, text)
    if (digest instanceof Promise) return signedByAsync(digest, text, keys.slice(k + 1), expected)
    if (matchesAny(digest, expected)) return true
  }
  return false
}

async function signedByAsync(
  pending: Promise<Uint8Array>,
  text: Uint8Array,
  rest: readonly HmacKey[],
  expected: readonly Uint8Array[],
): Promise<boolean> {
  if (matchesAny(await pending, expected)) return true
  for (const key of rest) if (matchesAny(await hmacSha256(key, text), expected)) return true
  return false
}

function matchesAny(digest: Uint8Array, expected: readonly Uint8Array[]): boolean {
  for (const candidate of expected) if (timingSafeEqual(digest, candidate)) return true
  return false
}

/**
 * The other texts a signature may have been made over, each made only when the ones before it
 * failed: the service's own form if the body was not taken as it came (or was, wrongly), then,
 * only where they change something, every Unicode whitespace removed and Gson's escapes.
 */
function* fallbacks(raw: Uint8Array, triedAsReceived: boolean): Generator<Uint8Array> {
  // Each text is hashed before the next is made: the platform's stripper may reuse its buffer.
  const canonical = stripForHashing(raw)
  if (!triedAsReceived || canonical !== raw) yield canonical
  const unicode = stripUnicodeWhitespace(raw)
  if (unicode !== undefined) yield unicode
  const escaped = escapeLikeGson(raw)
  if (escaped !== undefined) yield stripForHashing(escaped)
}

/** The 32-byte digests a header holds; values that are not 64 hex digits are dropped. */
function parseSignatureHeader(header: string | null | undefined): Uint8Array[] {
  if (!header) return []
  // The service sends one value: no need to split.
  const parts = header.length === DIGEST_HEX_LENGTH ? [header] : header.split(',')
  const digests: Uint8Array[] = []
  for (const part of parts) {
    const value = part.trim()
    if (value.length !== DIGEST_HEX_LENGTH) continue
    const digest = fromHex(value)
    if (digest !== undefined) digests.push(digest)
  }
  return digests
}

function assertSecret(secret: unknown, caller: string): asserts secret is string {
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new TypeError(`@hookguard/core: ${caller} needs a non-empty secret string`)
  }
}
