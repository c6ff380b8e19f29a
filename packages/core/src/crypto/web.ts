import { stripJavaWhitespace } from '../strip.ts'
import type { CryptoBackend, HmacKey } from './types.ts'

const HMAC_SHA256 = { name: 'HMAC', hash: 'SHA-256' } as const

// TypeScript's DOM types want ArrayBuffer-backed views; ours always are, never shared memory.
const source = (bytes: Uint8Array) => bytes as Uint8Array<ArrayBuffer>

async function hmac(keys: readonly HmacKey[], data: Uint8Array): Promise<Uint8Array[]> {
  const signatures = await Promise.all(keys.map((key) => crypto.subtle.sign('HMAC', key as CryptoKey, source(data))))
  return signatures.map((signature) => new Uint8Array(signature))
}

export const backend: CryptoBackend = {
  importHmacKey: (secret) => crypto.subtle.importKey('raw', source(secret), HMAC_SHA256, false, ['sign']),
  hmac,
  // Web Crypto hashes asynchronously, on another thread where it can, so the text it is handed
  // must stay as it is: the portable stripper's result, a fresh copy, is.
  canonicalHmac: (keys, body) => hmac(keys, stripJavaWhitespace(body)),
  sha256: async (data) => new Uint8Array(await crypto.subtle.digest('SHA-256', source(data))),
  canonicalSha256: async (body) => new Uint8Array(await crypto.subtle.digest('SHA-256', source(stripJavaWhitespace(body)))),
  pbkdf2Sha256: async (password, salt, iterations) => {
    const key = await crypto.subtle.importKey('raw', source(password), 'PBKDF2', false, ['deriveBits'])
    const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt: source(salt), iterations }, key, 256)
    return new Uint8Array(bits)
  },
}
