import { toBase64 } from '#bytes'

const encoder = new TextEncoder()

export function utf8(text: string): Uint8Array {
  return encoder.encode(text)
}

export { containsAnyByte, decodeUtf8, fromHex, indexOfByte, isUtf8Bytes, occursMoreThan, toBase64 } from '#bytes'

/**
 * A body's bytes. A view on shared memory is copied: Web Crypto refuses one, and another thread
 * could change its bytes between the checks made of them and the hash. A `Uint8Array` of another
 * realm (a `vm` context, Next.js's edge sandbox) is read through a view of this one; anything else
 * is the caller's mistake, told plainly, where each build failed its own way (or, on the Web build,
 * read a `Uint16Array`'s bytes).
 */
export function toBytes(body: string | Uint8Array): Uint8Array {
  if (typeof body === 'string') return encoder.encode(body)
  const bytes = body instanceof Uint8Array ? body : fromOtherRealm(body)
  return typeof SharedArrayBuffer === 'function' && bytes.buffer instanceof SharedArrayBuffer ? new Uint8Array(bytes) : bytes
}

function fromOtherRealm(body: unknown): Uint8Array {
  const kind = Object.prototype.toString.call(body).slice(8, -1)
  if (kind === 'Uint8Array' && ArrayBuffer.isView(body)) {
    const view = new Uint8Array(body.buffer, body.byteOffset, body.byteLength)
    return Object.prototype.toString.call(body.buffer) === '[object SharedArrayBuffer]' ? new Uint8Array(view) : view
  }
  // The kind only: a body's content never goes into an error.
  const got = body === null ? 'null' : typeof body === 'object' ? kind : typeof body
  const hint = kind === 'ArrayBuffer' ? ' (wrap it: new Uint8Array(body))' : ''
  throw new TypeError(`@hookguard/core: a body is a string or a Uint8Array, got ${got}${hint}`)
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
