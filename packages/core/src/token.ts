import { decodeUtf8, fromBase64Url, toBase64Url, utf8 } from './bytes.ts'
import { timingSafeEqual } from './constant-time.ts'
import type { HmacKey } from './crypto/types.ts'
import { hmacSha256, importKey, keyFor } from './hmac.ts'

/**
 * Stateless OAuth 2.0 access tokens: `base64url(claims).base64url(HMAC-SHA256(claims))`.
 *
 * Nothing is stored, so any instance configured with the same key material accepts a token that
 * another issued. The MAC key is derived from the configured secret rather than being the secret
 * itself, so a token never doubles as an oracle for the webhook signing secret.
 */

const KEY_LABEL = utf8('hookguard oauth2 access-token key v1')
const VERSION = 1
/** Far above any token we issue; refuses absurd inputs before any work. */
const MAX_TOKEN_LENGTH = 1024

interface Claims {
  v: number
  app: string
  iat: number
  exp: number
}

export type TokenCheck = 'valid' | 'invalid' | 'expired'

/** Derives the token MAC key from key material (the app secret or a `tokenKeys` entry). */
export async function deriveTokenKey(material: string): Promise<HmacKey> {
  const raw = await hmacSha256(await keyFor(material), KEY_LABEL)
  return importKey(raw)
}

/** Issues a token for `appId`, valid `ttlSeconds` from `nowMs`, signed with `key`. */
export async function issueToken(key: HmacKey, appId: string, ttlSeconds: number, nowMs: number): Promise<string> {
  const iat = Math.floor(nowMs / 1000)
  const claims: Claims = { v: VERSION, app: appId, iat, exp: iat + ttlSeconds }
  const body = toBase64Url(utf8(JSON.stringify(claims)))
  const mac = await hmacSha256(key, utf8(body))
  return `${body}.${toBase64Url(mac)}`
}

/**
 * Checks a token's MAC against each key (the first signs new tokens, the rest are kept for
 * rotation), then its app and expiry. The MAC is checked before the claims are even parsed.
 */
export async function checkToken(token: string, keys: readonly HmacKey[], appId: string, nowMs: number): Promise<TokenCheck> {
  if (token.length > MAX_TOKEN_LENGTH) return 'invalid'
  const dot = token.indexOf('.')
  if (dot === -1 || token.indexOf('.', dot + 1) !== -1) return 'invalid'
  const body = token.slice(0, dot)
  const mac = fromBase64Url(token.slice(dot + 1))
  if (mac === undefined) return 'invalid'

  const signed = utf8(body)
  let authentic = false
  for (const key of keys) {
    if (timingSafeEqual(mac, await hmacSha256(key, signed))) authentic = true
  }
  if (!authentic) return 'invalid'

  const claims = parseClaims(body)
  if (claims === undefined || claims.app !== appId) return 'invalid'
  return nowMs < claims.exp * 1000 ? 'valid' : 'expired'
}

function parseClaims(body: string): Claims | undefined {
  const bytes = fromBase64Url(body)
  if (bytes === undefined) return undefined
  try {
    const value: unknown = JSON.parse(decodeUtf8(bytes))
    if (typeof value !== 'object' || value === null) return undefined
    const { v, app, iat, exp } = value as Record<string, unknown>
    if (v !== VERSION || typeof app !== 'string' || typeof iat !== 'number' || typeof exp !== 'number') return undefined
    return { v, app, iat, exp }
  } catch {
    return undefined
  }
}
