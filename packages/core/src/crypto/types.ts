/** An imported HMAC-SHA256 key: a `CryptoKey` on the Web build, the key bytes on Node. */
export type HmacKey = object

/**
 * What the rest of the core needs from the platform: the crypto, and the byte work a platform
 * does much faster than portable code (whitespace stripping, strict UTF-8 decoding). `crypto/node.ts` and `crypto/web.ts` each
 * implement it; the package's `#crypto` import condition picks one, so no runtime check chooses
 * between them.
 */
export interface CryptoBackend {
  importHmacKey(secret: Uint8Array): Promise<HmacKey>
  /** Synchronous where the platform hashes synchronously, so a caller awaits only when it must. */
  hmacSha256(key: HmacKey, data: Uint8Array): Uint8Array | Promise<Uint8Array>
  sha256(data: Uint8Array): Promise<Uint8Array>
  /** PBKDF2-HMAC-SHA256, 32 bytes: deliberately slow, off the event loop where the platform allows. */
  pbkdf2Sha256(password: Uint8Array, salt: Uint8Array, iterations: number): Promise<Uint8Array>
  /**
   * Removes Java's `\s` bytes, as `stripJavaWhitespace` does, the fastest way the platform can.
   * Returns the body itself when nothing was removed; otherwise the result may be a scratch buffer
   * that is valid only until the next call, so a caller hashes it first, with no `await` between.
   */
  stripForHashing(body: Uint8Array): Uint8Array
  /** Strict UTF-8 decoding: throws a `TypeError` on malformed input rather than inserting U+FFFD. */
  decodeUtf8(data: Uint8Array): string
}
