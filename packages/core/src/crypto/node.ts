import { createHash, createHmac } from 'node:crypto'
import type { CryptoBackend } from './types.ts'

// Buffer's search is memchr: an order of magnitude faster than any loop over a Uint8Array, and it
// works on any Uint8Array without a copy.
const indexOf = Buffer.prototype.indexOf

// node:crypto hashes synchronously and without copying the input to another thread, which is
// what keeps verification at the cost of the HMAC itself on Node.
export const backend: CryptoBackend = {
  // The raw key bytes, not a KeyObject: createHmac unwraps a KeyObject on every call, which costs
  // more than hashing a small body.
  importHmacKey: async (secret) => Buffer.from(secret),
  hmacSha256: async (key, data) =>
    createHmac('sha256', key as Buffer)
      .update(data)
      .digest(),
  sha256: async (data) => createHash('sha256').update(data).digest(),
  includesByte: (data, byte) => indexOf.call(data, byte) !== -1,
}
