import * as crypto from 'node:crypto'
import { stripModule } from '#strip-module'
import { containsAnyByte } from '../bytes-platform/node.ts'
import type { CanonicalReport, CryptoBackend, HmacKey } from './types.ts'
import { createStripper, SCAN_CHUNK, SCAN_PROBE, WASM_STRIP_MAX, type WhitespaceSearch } from './wasm-strip.ts'

/** SHA-256's block size: the HMAC key is padded (or first hashed) to it. */
const BLOCK = 64
/**
 * Bodies up to this size are hashed by two one-shot SHA-256 calls (RFC 2104 spelled out) rather
 * than by `createHmac`, whose object setup costs more than hashing a small body: about 30 % less
 * time at 1 KiB, still 7 % less at 16 KiB, where copying the body behind the key pad starts to cost
 * as much as the setup saves.
 */
const ONE_SHOT_MAX = 16 * 1024

// `crypto.hash` is Node >= 20.12 (and not in every runtime that loads the Node build).
const hash = typeof crypto.hash === 'function' ? crypto.hash : undefined

interface NodeHmacKey {
  /**
   * For `createHmac`: a `KeyObject` made once, where the runtime has them. Node 24 checks a Buffer
   * key afresh on every `createHmac` (about 13 µs more a call than a `KeyObject`, several times
   * the HMAC of a small body); Node 20 and 22 take either at the same cost.
   */
  secret: crypto.KeyObject | Buffer
  /** The key XOR 0x36 and XOR 0x5c, one block each. */
  inner: Buffer
  outer: Buffer
}

/**
 * Reused across calls (hashing is synchronous): ipad-key then body; opad-key then inner digest.
 * The first is a plain `Uint8Array`: V8 looks a `Buffer`'s methods up on Node's prototype, which
 * holds too many to be read as constants, on every call. The second is written as text, which only
 * a `Buffer` does natively.
 */
let innerInput = new Uint8Array(BLOCK + 1024)
const outerInput = Buffer.alloc(BLOCK + 32)
/**
 * Whose pads those two hold now: a receiver of one secret writes them once, not on every
 * delivery (each `set` is a call into a builtin, about 160 instructions).
 */
let innerKey: NodeHmacKey | undefined
let outerKey: NodeHmacKey | undefined

function padded(secret: Buffer, byte: number): Buffer {
  // A key longer than a block is hashed first, as createHmac does.
  const key = secret.length > BLOCK ? crypto.createHash('sha256').update(secret).digest() : secret
  const pad = Buffer.alloc(BLOCK, byte)
  for (let i = 0; i < key.length; i++) pad[i] = (pad[i] as number) ^ (key[i] as number)
  return pad
}

function oneShotHmac(key: NodeHmacKey, data: Uint8Array, sha256: NonNullable<typeof hash>): string {
  if (innerInput.length < BLOCK + data.length) {
    innerInput = new Uint8Array(BLOCK + ONE_SHOT_MAX)
    innerKey = undefined
  }
  if (innerKey !== key) {
    innerInput.set(key.inner, 0)
    innerKey = key
  }
  innerInput.set(data, BLOCK)
  const inner = sha256('sha256', innerInput.subarray(0, BLOCK + data.length), 'binary')
  if (outerKey !== key) {
    outerInput.set(key.outer, 0)
    outerKey = key
  }
  outerInput.write(inner, BLOCK, 'latin1')
  return sha256('sha256', outerInput, 'binary')
}

function streamedHmac(key: NodeHmacKey, data: Uint8Array): string {
  return crypto.createHmac('sha256', key.secret).update(data).digest('binary')
}

/**
 * A digest as bytes. Node hands digests out cheapest as latin1 ('binary') strings: a Buffer
 * digest allocates a fresh off-heap store, which costs a tenth of a 1 KiB HMAC.
 */
function bytesOf(digest: string): Uint8Array {
  const out = new Uint8Array(digest.length)
  for (let i = 0; i < out.length; i++) out[i] = digest.charCodeAt(i)
  return out
}

/** Java's `\s`, the most frequent first: a body with a space is told after a short search. */
const JAVA_WHITESPACE_BYTES = [0x20, 0x0a, 0x09, 0x0d, 0x0b, 0x0c]

/** One native `memchr` per whitespace byte, over the whole of `bytes`. */
const hasJavaWhitespace: WhitespaceSearch = (bytes) => containsAnyByte(bytes, JAVA_WHITESPACE_BYTES)

/** The WebAssembly kernel up to 1 MiB, the portable JavaScript above it or without WebAssembly. */
const stripper = createStripper(stripModule, hasJavaWhitespace)

/**
 * The canonical text, possibly in the WebAssembly stripper's memory, which its next call
 * overwrites: so it is hashed right here, synchronously, and never handed out.
 */
function transientCanonical(body: Uint8Array, told?: CanonicalReport): Uint8Array {
  return hasJavaWhitespace(body) ? stripper.strip(body, told) : body
}

/**
 * The Gson fallback's text and its HMACs, the text possibly in the kernels' memory, as
 * {@link transientCanonical}'s: hashed right here, synchronously (node:crypto hashes before it
 * returns), and handed out only for the caller to copy before anything else runs.
 */
function gsonDigests(keys: readonly HmacKey[], body: Uint8Array, maxEscapes: number) {
  const text = stripper.gson(body, maxEscapes)
  return text === undefined ? undefined : { digests: keys.map((key) => hmacNow(key, text)), text }
}

/**
 * Above the one-shot size, a body is searched and hashed a chunk at a time, each chunk hashed
 * right after its search found no whitespace, so both read it from cache; the first whitespace
 * abandons the hashes for the stripped text. Up to the kernel's bound the search is the kernel's:
 * the chunk copied into its memory (fixed and reused: a chunk never needs more of it than the
 * tables and 16 KiB) and scanned there in one SIMD pass, which with the copy costs about half of
 * the six `memchr` it replaces (docs/benchmarks.md, notes). Above the bound, and without
 * WebAssembly, the search stays the platform's.
 */
function canonicalDigests(keys: readonly HmacKey[], body: Uint8Array, told?: CanonicalReport): Uint8Array[] {
  if (body.length <= ONE_SHOT_MAX) {
    const text = transientCanonical(body, told)
    if (told !== undefined) told.stripped = text !== body
    return keys.map((key) => hmacNow(key, text))
  }
  const hasWhitespace = body.length <= WASM_STRIP_MAX ? stripper.hasWhitespace : hasJavaWhitespace
  if (hasWhitespace(body.subarray(0, SCAN_PROBE))) return strippedDigests(keys, body, told)
  let hmacs: crypto.Hmac[] | undefined
  for (let offset = 0; offset < body.length; offset += SCAN_CHUNK) {
    const chunk = body.subarray(offset, offset + SCAN_CHUNK)
    if (hasWhitespace(chunk)) return strippedDigests(keys, body, told)
    // Made once the first chunk is known clean: a pretty body never pays for them.
    hmacs ??= keys.map((key) => crypto.createHmac('sha256', (key as NodeHmacKey).secret))
    for (const hmac of hmacs) hmac.update(chunk)
  }
  return (hmacs ?? []).map((hmac) => bytesOf(hmac.digest('binary')))
}

/** The HMACs of a large body found to hold whitespace: of its stripped text, whole. */
function strippedDigests(keys: readonly HmacKey[], body: Uint8Array, told?: CanonicalReport): Uint8Array[] {
  if (told !== undefined) told.stripped = true
  const text = stripper.strip(body, told)
  return keys.map((key) => hmacNow(key, text))
}

function hmacNow(key: HmacKey, data: Uint8Array): Uint8Array {
  const nodeKey = key as NodeHmacKey
  return bytesOf(hash !== undefined && data.length <= ONE_SHOT_MAX ? oneShotHmac(nodeKey, data, hash) : streamedHmac(nodeKey, data))
}

function canonicalSha256Now(body: Uint8Array): Uint8Array {
  return sha256Now(transientCanonical(body))
}

function sha256Now(data: Uint8Array): Uint8Array {
  return hash !== undefined ? bytesOf(hash('sha256', data, 'binary')) : crypto.createHash('sha256').update(data).digest()
}

// node:crypto hashes synchronously and without copying the input to another thread, which is
// what keeps verification at the cost of the HMAC itself on Node.
export const backend: CryptoBackend = {
  importHmacKey: async (secret): Promise<HmacKey> => {
    const bytes = Buffer.from(secret)
    const object = typeof crypto.createSecretKey === 'function' ? crypto.createSecretKey(bytes) : bytes
    const key: NodeHmacKey = { secret: object, inner: padded(bytes, 0x36), outer: padded(bytes, 0x5c) }
    return key
  },
  hmac: async (keys, data) => keys.map((key) => hmacNow(key, data)),
  canonicalHmac: async (keys, body, told) => canonicalDigests(keys, body, told),
  canonicalHmacSync: canonicalDigests,
  sha256: async (data) => sha256Now(data),
  canonicalSha256: async (body) => canonicalSha256Now(body),
  canonicalSha256Sync: (body) => canonicalSha256Now(body),
  sha256Sync: (data) => sha256Now(data),
  gsonHmacSync: gsonDigests,
  // A copy: the text is hashed after an `await`, and a match keeps it for the delivery's fingerprint.
  unicodeText: (body) => stripper.unicode(body)?.slice(),
  stripper: () => stripper.kind(),
  // The asynchronous form runs on libuv's thread pool, so a slow derivation never blocks requests.
  pbkdf2Sha256: (password, salt, iterations) =>
    new Promise((resolve, reject) => {
      crypto.pbkdf2(password, salt, iterations, 32, 'sha256', (error, key) => (error ? reject(error) : resolve(key)))
    }),
}
