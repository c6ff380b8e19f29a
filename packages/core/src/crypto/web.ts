import { stripModule } from '#strip-module'
import { indexOfJavaWhitespace } from '../strip.ts'
import type { CanonicalReport, CryptoBackend, HmacKey } from './types.ts'
import { createStripper, SCAN_CHUNK, SCAN_PROBE } from './wasm-strip.ts'

const HMAC_SHA256 = { name: 'HMAC', hash: 'SHA-256' } as const

// TypeScript's DOM types want ArrayBuffer-backed views; ours always are, never shared memory.
const source = (bytes: Uint8Array) => bytes as Uint8Array<ArrayBuffer>

/**
 * The WebAssembly kernel up to 1 MiB, where the runtime gives a module (compiled from bytes, or
 * imported on Workers and Vercel's edge); the portable JavaScript above it or without one.
 */
const stripper = createStripper(stripModule, (bytes) => indexOfJavaWhitespace(bytes) !== -1)

/**
 * The canonical text: the body itself when no chunk holds whitespace, told by the kernel's scan
 * of a copy, which costs about half of stripping it in place; else the stripper's text,
 * transient as {@link hmac} says. Web Crypto hashes in one call anyway, so only the search is
 * chunked.
 */
function canonical(body: Uint8Array, told?: CanonicalReport): Uint8Array {
  if (stripper.hasWhitespace(body.subarray(0, SCAN_PROBE))) return stripper.strip(body, told)
  for (let offset = SCAN_PROBE; offset < body.length; offset += SCAN_CHUNK) {
    if (stripper.hasWhitespace(body.subarray(offset, offset + SCAN_CHUNK))) return stripper.strip(body, told)
  }
  return body
}

/**
 * Every key's `sign` is called here, synchronously, before the first `await`. Web Crypto takes its
 * own copy of `data` when `sign` is called, before it returns the promise (WebCrypto's "get a copy
 * of the bytes held by the data parameter"; workerd signs on the spot), so `data` may be a view
 * of the stripper's memory, which the next strip overwrites: the runtimes test holds each runtime
 * to this.
 */
async function hmac(keys: readonly HmacKey[], data: Uint8Array): Promise<Uint8Array[]> {
  const signatures = await Promise.all(keys.map((key) => crypto.subtle.sign('HMAC', key as CryptoKey, source(data))))
  return signatures.map((signature) => new Uint8Array(signature))
}

/**
 * The Gson fallback's text made by the kernel (canonical.ts's JavaScript pass cost up to fifteen
 * `sign`s of a hostile body here), hashed with each key, and copied: `sign` has taken its own copy
 * before this returns to the event loop, but the text must outlive the `await` for a match's
 * fingerprint, and the next call overwrites the kernel's memory. A copy costs a small part of one
 * `sign` of the same bytes.
 */
async function gsonHmac(keys: readonly HmacKey[], body: Uint8Array, maxEscapes: number) {
  const made = stripper.gson(body, maxEscapes)
  if (made === undefined) return undefined
  const digests = hmac(keys, made)
  const text = made.slice()
  return { digests: await digests, text }
}

export const backend: CryptoBackend = {
  importHmacKey: (secret) => crypto.subtle.importKey('raw', source(secret), HMAC_SHA256, false, ['sign']),
  hmac,
  canonicalHmac: (keys, body, told) => {
    const text = canonical(body, told)
    if (told !== undefined) told.stripped = text !== body
    return hmac(keys, text)
  },
  sha256: async (data) => new Uint8Array(await crypto.subtle.digest('SHA-256', source(data))),
  // `digest` copies its input when called, as `sign` does.
  canonicalSha256: async (body) => new Uint8Array(await crypto.subtle.digest('SHA-256', source(stripper.strip(body)))),
  gsonHmac,
  // A copy: the text is hashed after an `await`, and a match keeps it for the delivery's fingerprint.
  unicodeText: (body) => stripper.unicode(body)?.slice(),
  stripper: () => stripper.kind(),
  pbkdf2Sha256: async (password, salt, iterations) => {
    const key = await crypto.subtle.importKey('raw', source(password), 'PBKDF2', false, ['deriveBits'])
    const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt: source(salt), iterations }, key, 256)
    return new Uint8Array(bits)
  },
}
