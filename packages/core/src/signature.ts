import { fromHex, toBytes, toHex } from './bytes.ts'
import { escapeLikeGson, likelyCanonical, stripJavaWhitespace, stripUnicodeWhitespace } from './canonical.ts'
import { timingSafeEqual } from './constant-time.ts'
import { hmacSha256, includesByte, keyFor } from './hmac.ts'

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
  const keys = await Promise.all(list.map(keyFor))
  const matches = async (text: Uint8Array): Promise<boolean> => {
    for (const key of keys) {
      const digest = await hmacSha256(key, text)
      for (const candidate of expected) if (timingSafeEqual(digest, candidate)) return true
    }
    return false
  }

  // The service's own form first. A body that is probably canonical already is hashed as it
  // came, without a full scan; had it whitespace after all, the stripped form is tried next.
  let canonical: Uint8Array
  if (likelyCanonical(raw, includesByte)) {
    if (await matches(raw)) return true
    canonical = stripJavaWhitespace(raw)
    if (canonical !== raw && (await matches(canonical))) return true
  } else {
    canonical = stripJavaWhitespace(raw)
    if (await matches(canonical)) return true
  }
  const unicode = stripUnicodeWhitespace(raw)
  if (unicode !== undefined && (await matches(unicode))) return true
  const escaped = escapeLikeGson(raw)
  return escaped !== undefined && (await matches(stripJavaWhitespace(escaped)))
}

/** The 32-byte digests a header holds; values that are not 64 hex digits are dropped. */
function parseSignatureHeader(header: string | null | undefined): Uint8Array[] {
  if (!header) return []
  const digests: Uint8Array[] = []
  for (const part of header.split(',')) {
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
