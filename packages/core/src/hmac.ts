import { backend } from '#crypto'
import { utf8 } from './bytes.ts'
import type { HmacKey } from './crypto/types.ts'

/** Imported keys by secret. Bounded, since per-tenant resolvers can bring any number of secrets. */
const keys = new Map<string, Promise<HmacKey>>()
const MAX_CACHED_KEYS = 1024

/**
 * The imported HMAC key for a secret, cached: importing a `CryptoKey` costs more than an HMAC over
 * a small body. A failed import is not cached.
 */
export function keyFor(secret: string): Promise<HmacKey> {
  let key = keys.get(secret)
  if (key === undefined) {
    if (keys.size >= MAX_CACHED_KEYS) keys.delete(keys.keys().next().value as string)
    key = backend.importHmacKey(utf8(secret))
    key.catch(() => keys.delete(secret))
    keys.set(secret, key)
  }
  return key
}

export function hmacSha256(key: HmacKey, data: Uint8Array): Promise<Uint8Array> {
  return backend.hmacSha256(key, data)
}

export function sha256(data: Uint8Array): Promise<Uint8Array> {
  return backend.sha256(data)
}

export function importKey(secret: Uint8Array): Promise<HmacKey> {
  return backend.importHmacKey(secret)
}

export const { includesByte } = backend
