import { backend } from '#crypto'
import { utf8 } from './bytes.ts'
import type { HmacKey } from './crypto/types.ts'

/**
 * Imported keys by secret: the import while it runs, the key once it has. Bounded, since
 * per-tenant resolvers can bring any number of secrets.
 */
const keys = new Map<string, HmacKey | Promise<HmacKey>>()
const MAX_CACHED_KEYS = 1024

/**
 * The imported HMAC key for a secret, cached: importing a `CryptoKey` costs more than an HMAC over
 * a small body. Once imported it is handed out as is, not as a promise, so the verify path does
 * not wait a turn for it. A failed import is not cached.
 */
export function keyFor(secret: string): HmacKey | Promise<HmacKey> {
  const cached = keys.get(secret)
  if (cached !== undefined) return cached
  if (keys.size >= MAX_CACHED_KEYS) keys.delete(keys.keys().next().value as string)
  const importing = backend.importHmacKey(utf8(secret)).then(
    (key) => {
      // Unless the entry was evicted meanwhile: the cache stays bounded.
      const entry = keys.get(secret)
      if (entry === importing) keys.set(secret, key)
      return key
    },
    (error: unknown) => {
      keys.delete(secret)
      throw error
    },
  )
  keys.set(secret, importing)
  return importing
}

export function hmacSha256(key: HmacKey, data: Uint8Array): Uint8Array | Promise<Uint8Array> {
  return backend.hmacSha256(key, data)
}

export function sha256(data: Uint8Array): Promise<Uint8Array> {
  return backend.sha256(data)
}

/** See `CryptoBackend.stripForHashing`: hash the result before the next call or any `await`. */
export function stripForHashing(body: Uint8Array): Uint8Array {
  return backend.stripForHashing(body)
}

export function pbkdf2Sha256(password: Uint8Array, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  return backend.pbkdf2Sha256(password, salt, iterations)
}

export function importKey(secret: Uint8Array): Promise<HmacKey> {
  return backend.importHmacKey(secret)
}
