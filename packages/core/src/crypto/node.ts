import { isUtf8 } from 'node:buffer'
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
  // Validating with isUtf8 and decoding with Buffer (both SIMD) beats a fatal TextDecoder,
  // which goes through ICU, several times over on webhook-sized bodies.
  decodeUtf8: (data) => {
    if (!isUtf8(data)) throw new TypeError('The data is not valid UTF-8')
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')
  },
}
