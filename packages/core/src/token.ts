import { backend } from '#crypto'
import { decodeUtf8, fromBase64Url, toBase64Url, utf8 } from './bytes.ts'
import { timingSafeEqual } from './constant-time.ts'
import type { HmacKey } from './crypto/types.ts'

/**
 * Stateless OAuth 2.0 access tokens: `base64url(claims).base64url(HMAC-SHA256(claims))`.
 *
 * Nothing is stored, so any instance configured with the same key material accepts a token that
 * another issued. The MAC key is derived from the configured secret rather than being the secret
 * itself, so a token never doubles as an oracle for the webhook signing secret.
 *
 * Tokens travel in query strings and end up in access logs, and a token with its MAC is enough to
 * test guesses of the secret offline. So the derivation is deliberately slow: PBKDF2-HMAC-SHA256,
 * salted with the app id so that no guess serves two apps, run once per key and then cached.
 */

const KEY_LABEL = 'hookguard oauth2 access-token key v2'
/**
 * As many as every runtime allows: Cloudflare Workers' Web Crypto refuses more than 100 000
 * PBKDF2 iterations, and a token issued on one runtime must verify on all of them. About 0.1 s
 * once per key on Node, where a guess used to cost two HMACs.
 */
export const TOKEN_KEY_ITERATIONS = 100_000
const VERSION = 2
/** Far above any token we issue; refuses absurd inputs before any work. */
/** Longer than any token issued here: refused before any work. */
export const MAX_TOKEN_LENGTH = 1024

interface Claims {
  v: number
  app: string
  iat: number
  exp: number
}

export type TokenCheck = 'valid' | 'invalid' | 'expired'

/**
 * Derived keys by app and key material, shared by every receiver in the process (a token address
 * and a message address configured alike derive once). Bounded: per-tenant setups may bring many.
 */
const derived = new Map<string, Promise<HmacKey>>()
const MAX_DERIVED_KEYS = 256

/** Derives the token MAC key from key material (the app secret or a `tokenKeys` entry). */
export function deriveTokenKey(material: string, appId: string): Promise<HmacKey> {
  const id = `${appId}\u0000${material}`
  const cached = derived.get(id)
  // Stryker disable next-line ConditionalExpression: speed only — a cache: deriving again gives the same key
  if (cached !== undefined) return cached
  // Stryker disable next-line ConditionalExpression,EqualityOperator: speed and memory only — when the cache evicts changes no key and no verdict
  if (derived.size >= MAX_DERIVED_KEYS) derived.delete(derived.keys().next().value as string)
  const salt = utf8(`${KEY_LABEL}\u0000${appId}`)
  const deriving = backend.pbkdf2Sha256(utf8(material), salt, TOKEN_KEY_ITERATIONS).then((raw) => backend.importHmacKey(raw))
  // A failed derivation is not kept, so the next request tries again.
  deriving.catch(() => derived.delete(id))
  derived.set(id, deriving)
  return deriving
}

/** Issues a token for `appId`, valid `ttlSeconds` from `nowMs`, signed with `key`. */
export async function issueToken(key: HmacKey, appId: string, ttlSeconds: number, nowMs: number): Promise<string> {
  const iat = Math.floor(nowMs / 1000)
  const claims: Claims = { v: VERSION, app: appId, iat, exp: iat + ttlSeconds }
  const body = toBase64Url(utf8(JSON.stringify(claims)))
  const [mac] = await backend.hmac([key], utf8(body))
  return `${body}.${toBase64Url(mac as Uint8Array)}`
}

/**
 * Checks a token's MAC against each key (the first signs new tokens, the rest are kept for
 * rotation), then its app and expiry. The MAC is checked before the claims are even parsed.
 */
export async function checkToken(token: string, keys: readonly HmacKey[], appId: string, nowMs: number): Promise<TokenCheck> {
  if (token.length > MAX_TOKEN_LENGTH) return 'invalid'
  const dot = token.indexOf('.')
  // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent — a token with no dot or two leaves a MAC part that is not base64url (or matches nothing): 'invalid' either way
  if (dot === -1 || token.indexOf('.', dot + 1) !== -1) return 'invalid'
  const body = token.slice(0, dot)
  const mac = fromBase64Url(token.slice(dot + 1))
  if (mac === undefined) return 'invalid'

  let authentic = false
  // Every key is compared, not only until one matches: which key signed is not told by the time taken.
  for (const expected of await backend.hmac(keys, utf8(body))) if (timingSafeEqual(mac, expected)) authentic = true
  if (!authentic) return 'invalid'

  const claims = parseClaims(body)
  if (claims === undefined || claims.app !== appId) return 'invalid'
  return nowMs < claims.exp * 1000 ? 'valid' : 'expired'
}

function parseClaims(body: string): Claims | undefined {
  const bytes = fromBase64Url(body)
  // Stryker disable next-line ConditionalExpression: equivalent — decoding undefined throws (Node) or gives '', which JSON.parse refuses: undefined either way
  if (bytes === undefined) return undefined
  try {
    const value: unknown = JSON.parse(decodeUtf8(bytes))
    // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent — destructuring null throws (caught) and a primitive has no v: undefined either way
    if (typeof value !== 'object' || value === null) return undefined
    const { v, app, iat, exp } = value as Record<string, unknown>
    if (v !== VERSION || typeof app !== 'string' || typeof iat !== 'number' || typeof exp !== 'number') return undefined
    return { v, app, iat, exp }
  } catch {
    return undefined
  }
}
