import type { StripperKind, StripReport } from './wasm-strip.ts'

/** What `canonicalHmac` tells its caller about the body, besides the digests. */
export interface CanonicalReport extends StripReport {
  /** Whether any byte was removed. */
  stripped: boolean
}

/** An imported HMAC-SHA256 key: a `CryptoKey` on the Web build, the key bytes on Node. */
export type HmacKey = object

/**
 * The one seam between the protocol and the platform's crypto: `crypto/node.ts` and
 * `crypto/web.ts` each implement it, and the package's `#crypto` import condition picks one, so no
 * runtime check chooses between them. Everything above it is plain `async` code; every speed trick
 * (a WebAssembly stripper, a one-shot HMAC, a reused scratch buffer) stays inside an implementation.
 */
export interface CryptoBackend {
  importHmacKey(secret: Uint8Array): Promise<HmacKey>
  /** HMAC-SHA256 of `data` with each key, in order. */
  hmac(keys: readonly HmacKey[], data: Uint8Array): Promise<Uint8Array[]>
  /**
   * HMAC-SHA256 with each key of the service's canonical text: `body` with exactly Java's six
   * whitespace bytes removed (the body itself when it holds none). Strips once, hashes with
   * every key. With `told`, sets its `stripped`, and its `joins` where the body was stripped.
   */
  canonicalHmac(keys: readonly HmacKey[], body: Uint8Array, told?: CanonicalReport): Promise<Uint8Array[]>
  /**
   * The same, synchronously, where the platform hashes synchronously (Node): a delivery then
   * awaits nothing for its signature, where each `await` costs a turn of the microtask queue and
   * a promise resolved with an array, which V8 must ask for a `then` (see docs/benchmarks.md, notes).
   */
  canonicalHmacSync?: (keys: readonly HmacKey[], body: Uint8Array, told?: CanonicalReport) => Uint8Array[]
  sha256(data: Uint8Array): Promise<Uint8Array>
  /** SHA-256 of the service's canonical text of `body` (as `canonicalHmac` strips it): a delivery's fingerprint. */
  canonicalSha256(body: Uint8Array): Promise<Uint8Array>
  /** The same, synchronously, where the platform hashes synchronously (Node): lets a fingerprint be hashed only when read. */
  canonicalSha256Sync?: (body: Uint8Array) => Uint8Array
  /** SHA-256 of `data`, synchronously, where `canonicalSha256Sync` is: the fingerprint of a mode that signs nothing. */
  sha256Sync?: (data: Uint8Array) => Uint8Array
  /**
   * Where the platform makes the Gson fallback's text faster than canonical.ts's portable pass
   * (Node: WebAssembly): HMAC-SHA256 with each key of `body` with Gson's escapes applied and
   * Java's whitespace removed, exactly as canonical.ts's `gsonText(body, maxEscapes)` makes it, and
   * that text; `undefined` when `gsonText` would be. Synchronous because the text may lie in the
   * platform's scratch memory, valid only until the backend's next call: the caller reads it (or
   * copies it) before it awaits or calls the backend again.
   */
  gsonHmacSync?: (keys: readonly HmacKey[], body: Uint8Array, maxEscapes: number) => { digests: Uint8Array[]; text: Uint8Array } | undefined
  /**
   * The same, where the platform hashes asynchronously (Web Crypto): the text is the caller's own
   * copy. Where neither is given, canonical.ts's portable pass makes the text.
   */
  gsonHmac?: (
    keys: readonly HmacKey[],
    body: Uint8Array,
    maxEscapes: number,
  ) => Promise<{ digests: Uint8Array[]; text: Uint8Array } | undefined>
  /**
   * Where the platform makes it faster than canonical.ts's portable pass (WebAssembly): the body
   * with every Unicode whitespace character removed, exactly as canonical.ts's
   * `stripUnicodeWhitespace` makes it, the caller's own copy; `undefined` when that would be.
   */
  unicodeText?: (body: Uint8Array) => Uint8Array | undefined
  /** Which stripper `canonicalHmac` and `canonicalSha256` use for bodies up to 1 MiB on this runtime. */
  stripper(): StripperKind
  /** PBKDF2-HMAC-SHA256, 32 bytes: deliberately slow, off the event loop where the platform allows. */
  pbkdf2Sha256(password: Uint8Array, salt: Uint8Array, iterations: number): Promise<Uint8Array>
}
