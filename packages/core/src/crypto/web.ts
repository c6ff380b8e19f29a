import { stripJavaWhitespace } from '../strip.ts'
import type { CryptoBackend } from './types.ts'

const HMAC_SHA256 = { name: 'HMAC', hash: 'SHA-256' } as const
// ignoreBOM keeps a leading U+FEFF, as Buffer does on Node: decoding is then the same everywhere.
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

// TypeScript's DOM types want ArrayBuffer-backed views; ours always are, never shared memory.
const source = (bytes: Uint8Array) => bytes as Uint8Array<ArrayBuffer>

export const backend: CryptoBackend = {
  importHmacKey: (secret) => crypto.subtle.importKey('raw', source(secret), HMAC_SHA256, false, ['sign']),
  hmacSha256: async (key, data) => new Uint8Array(await crypto.subtle.sign('HMAC', key as CryptoKey, source(data))),
  sha256: async (data) => new Uint8Array(await crypto.subtle.digest('SHA-256', source(data))),
  pbkdf2Sha256: async (password, salt, iterations) => {
    const key = await crypto.subtle.importKey('raw', source(password), 'PBKDF2', false, ['deriveBits'])
    const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt: source(salt), iterations }, key, 256)
    return new Uint8Array(bits)
  },
  // Web Crypto hashes asynchronously, so only a stable result will do: the portable stripper's.
  stripForHashing: stripJavaWhitespace,
  decodeUtf8: (data) => strictDecoder.decode(data),
}
