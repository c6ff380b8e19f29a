import { toBase64 } from '#bytes'

const encoder = new TextEncoder()

export function utf8(text: string): Uint8Array {
  return encoder.encode(text)
}

export { containsAnyByte, decodeUtf8, fromHex, indexOfByte, isUtf8Bytes, occursMoreThan, toBase64 } from '#bytes'

/**
 * A body's bytes. A view on shared memory is copied: Web Crypto refuses one, and another thread
 * could change its bytes between the checks made of them and the hash.
 */
export function toBytes(body: string | Uint8Array): Uint8Array {
  if (typeof body === 'string') return encoder.encode(body)
  return typeof SharedArrayBuffer === 'function' && body.buffer instanceof SharedArrayBuffer ? new Uint8Array(body) : body
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))

export function toHex(bytes: Uint8Array): string {
  let out = ''
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i] as number]
  return out
}

/** Standard base64, strict: `undefined` for any character outside the alphabet. */
export function fromBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) return undefined
  let binary: string
  try {
    binary = atob(text)
  } catch {
    return undefined
  }
  const out = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i)
  return out
}

export function toBase64Url(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/**
 * Unpadded base64url, strict and canonical: the bits of the last character that encode nothing must
 * be zero. Otherwise four spellings of a 32-byte MAC decode alike, and a token changed in its last
 * character would still verify.
 */
export function fromBase64Url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined
  const padded = text.replace(/-/g, '+').replace(/_/g, '/')
  const bytes = fromBase64(padded + '='.repeat((4 - (padded.length % 4)) % 4))
  if (bytes === undefined || toBase64Url(bytes) !== text) return undefined
  return bytes
}
