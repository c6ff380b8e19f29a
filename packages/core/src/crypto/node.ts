import { createHash, createHmac, createSecretKey, type KeyObject } from 'node:crypto'
import type { CryptoBackend } from './types.ts'

// node:crypto hashes synchronously and without copying the input to another thread, which is
// what keeps verification at the cost of the HMAC itself on Node.
export const backend: CryptoBackend = {
  importHmacKey: async (secret) => createSecretKey(secret),
  hmacSha256: async (key, data) =>
    createHmac('sha256', key as KeyObject)
      .update(data)
      .digest(),
  sha256: async (data) => createHash('sha256').update(data).digest(),
}
