/** An imported HMAC-SHA256 key: a `CryptoKey` on the Web build, a `KeyObject` on Node. */
export type HmacKey = object

/**
 * What the rest of the core needs from a crypto library. `crypto/node.ts` and `crypto/web.ts`
 * each implement it; the package's `#crypto` import condition picks one, so no runtime check
 * chooses between them.
 */
export interface CryptoBackend {
  importHmacKey(secret: Uint8Array): Promise<HmacKey>
  hmacSha256(key: HmacKey, data: Uint8Array): Promise<Uint8Array>
  sha256(data: Uint8Array): Promise<Uint8Array>
}
