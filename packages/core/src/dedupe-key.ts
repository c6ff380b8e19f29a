import { backend } from '#crypto'
import { toHex, utf8 } from './bytes.ts'
import type { Settings } from './options.ts'
import type { WebhookRequest } from './request.ts'
import { TOKEN_KEY_ITERATIONS } from './token.ts'

/**
 * Who a delivery came from, as its mode can tell: in mode `secret` the secret that signed it
 * (one of the receiver's own, or of those a per-tenant resolver found), in mode `basic` the
 * configured credentials (or, with `verify`, the user name presented), in mode `oauth2` the app,
 * in mode `none`, where nothing identifies the sender, the address itself. It holds secrets, so it
 * never leaves this module but through {@link scopeOf}.
 */
export interface Sender {
  /** Mode `secret`: the secret whose signature matched. */
  secret?: string | undefined
  /** Mode `basic` with `verify`: the user name it accepted. */
  username?: string
}

/** Scopes by identity, cached: a per-tenant receiver meets a bounded set of them. */
const scopes = new Map<string, Promise<string>>()
const MAX_CACHED_SCOPES = 1024

/** Salt of the slow derivation of a scope from secrets; it names what the derived bytes are for. */
const SCOPE_SALT = utf8('hookguard dedupe scope')

/**
 * The dedupe key of a delivery: its fingerprint, scoped by who sent it, so that two addresses or
 * two tenants sharing one store never take each other's deliveries for duplicates (a tenant that
 * signs another tenant's payload with its own secret claims only its own key). A scope made from
 * secrets is derived with the same slow KDF as the token keys, once per identity: a store's keys
 * are read by more people than the secrets are (a shared Redis, a backup), and a fast hash of a
 * secret would be an offline test of guesses at it. Cut to 128 bits.
 */
export async function scopedKey(settings: Settings, sender: Sender, req: WebhookRequest, fingerprint: string): Promise<string> {
  return `${await scopeOf(identityOf(settings, sender, req))}:${fingerprint}`
}

/** The identity, and whether it holds a secret (and so needs the slow derivation). */
function identityOf({ auth }: Settings, sender: Sender, req: WebhookRequest): [identity: string, secret: boolean] {
  switch (auth.mode) {
    case 'secret':
      // The secret that signed, not the set configured: a delivery retried while the receiver's
      // set changes (a rotation's deploys) is still the same delivery. Only a retry the service
      // signs with another secret (its own switch, mid-rotation) starts a new scope.
      return [`secret\n${sender.secret}`, true]
    case 'basic':
      return 'verify' in auth ? [`basic-user\n${sender.username}`, false] : [`basic\n${auth.username}\n${auth.password}`, true]
    case 'oauth2':
      // The app id names the app; its secret adds nothing to tell two apps apart.
      return [`oauth2\n${auth.appId}`, false]
    case 'none':
      // As routers match it by default (Express, Koa's routers): in any case, with or without a
      // trailing slash. Else `/hooks/` and `/HOOKS` would run a delivery already handled at `/hooks`.
      return [`none\n${req.url.pathname.toLowerCase().replace(/\/+$/, '')}`, false]
  }
}

function scopeOf([identity, secret]: [string, boolean]): Promise<string> {
  const cached = scopes.get(identity)
  if (cached !== undefined) return cached
  // Stryker disable next-line ConditionalExpression,EqualityOperator: memory only — when the cache evicts changes no key
  if (scopes.size >= MAX_CACHED_SCOPES) scopes.delete(scopes.keys().next().value as string)
  const text = utf8(identity)
  const digest = secret ? backend.pbkdf2Sha256(text, SCOPE_SALT, TOKEN_KEY_ITERATIONS) : backend.sha256(text)
  const scope = digest.then((bytes) => toHex(bytes.subarray(0, 16)))
  // A failed derivation is not kept: the next delivery tries again.
  scope.catch(() => scopes.delete(identity))
  scopes.set(identity, scope)
  return scope
}
