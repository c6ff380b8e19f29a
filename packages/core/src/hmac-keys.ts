import { backend } from '#crypto'
import { utf8 } from './bytes.ts'
import type { HmacKey } from './crypto/types.ts'

/**
 * Imported keys by secret. Importing a `CryptoKey` costs more than an HMAC over a small body, so
 * each secret is imported once. Bounded, since per-tenant resolvers can bring any number of
 * secrets; a failed import is not kept.
 */
const keys = new Map<string, Promise<HmacKey>>()
const MAX_CACHED_KEYS = 1024

/** The imported HMAC key for a secret. */
export function keyFor(secret: string): Promise<HmacKey> {
  const cached = keys.get(secret)
  if (cached !== undefined) return cached
  // Stryker disable next-line ConditionalExpression,EqualityOperator: speed and memory only — when the cache evicts changes no key and no verdict
  if (keys.size >= MAX_CACHED_KEYS) keys.delete(keys.keys().next().value as string)
  const importing = backend.importHmacKey(utf8(secret))
  importing.catch(() => keys.delete(secret))
  keys.set(secret, importing)
  return importing
}
