import { backend } from '#crypto'
import { toHex, utf8 } from './bytes.ts'
import type { Settings } from './options.ts'
import type { WebhookRequest } from './request.ts'

/**
 * Who a delivery came from, as its mode can tell: in mode `secret` the secrets it was checked
 * against (the receiver's own, or the ones a per-tenant resolver found), in mode `basic` the
 * configured credentials (or, with `verify`, the user name presented), in mode `oauth2` the app,
 * in mode `none`, where nothing identifies the sender, the address itself. It holds secrets, so it
 * never leaves this module but through {@link scopeOf}.
 */
export interface Sender {
  /** Mode `secret`: the secrets the signature was checked against. */
  secrets?: readonly string[]
  /** Mode `basic` with `verify`: the user name it accepted. */
  username?: string
}

/** Scopes by identity, cached: a per-tenant receiver meets a bounded set of them. */
const scopes = new Map<string, Promise<string>>()
const MAX_CACHED_SCOPES = 1024

/**
 * The dedupe key of a delivery: its fingerprint, scoped by who sent it, so that two addresses or
 * two tenants sharing one store never take each other's deliveries for duplicates (a tenant that
 * signs another tenant's payload with its own secret claims only its own key). The secrets go into
 * the scope through SHA-256, cut to 128 bits: the store never sees them.
 */
export async function scopedKey(settings: Settings, sender: Sender, req: WebhookRequest, fingerprint: string): Promise<string> {
  return `${await scopeOf(identityOf(settings, sender, req))}:${fingerprint}`
}

function identityOf({ auth }: Settings, sender: Sender, req: WebhookRequest): string {
  switch (auth.mode) {
    case 'secret':
      // The whole set, in any order: a retry re-signed with the new secret during a rotation is
      // still the same delivery.
      return `secret\n${[...(sender.secrets ?? [])].sort().join('\n')}`
    case 'basic':
      return 'verify' in auth ? `basic-user\n${sender.username}` : `basic\n${auth.username}\n${auth.password}`
    case 'oauth2':
      return `oauth2\n${auth.appId}\n${auth.secret}`
    case 'none':
      return `none\n${req.url.pathname}`
  }
}

function scopeOf(identity: string): Promise<string> {
  const cached = scopes.get(identity)
  if (cached !== undefined) return cached
  // Stryker disable next-line ConditionalExpression,EqualityOperator: memory only — when the cache evicts changes no key
  if (scopes.size >= MAX_CACHED_SCOPES) scopes.delete(scopes.keys().next().value as string)
  const scope = backend.sha256(utf8(`hookguard dedupe scope\n${identity}`)).then((digest) => toHex(digest.subarray(0, 16)))
  scopes.set(identity, scope)
  return scope
}
