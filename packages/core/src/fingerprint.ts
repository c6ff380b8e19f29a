import { backend } from '#crypto'
import { toHex } from './bytes.ts'
import type { SignatureMatch } from './signature.ts'

/**
 * A delivery's fingerprint: SHA-256 (hex) of the text its signature covered, the body with Java's
 * whitespace removed (the service's form, and the form in modes without a signature), or the
 * compatibility form that matched. Every whitespace variant of one delivery has the same one.
 */
export async function fingerprintOf(rawBody: Uint8Array, signature: SignatureMatch | undefined): Promise<string> {
  const digest = signature === undefined || signature.form === 'service' ? backend.canonicalSha256(rawBody) : backend.sha256(signature.text)
  return toHex(await digest)
}

/**
 * Whether the fingerprint can be hashed when first read, by {@link fingerprintNow}, for a receiver
 * that needs none itself (no dedupe, nobody listening): an application that never reads it pays no
 * hash per delivery. Only where hashing is synchronous (Node) and for the service's form.
 */
export function canHashLater(signature: SignatureMatch | undefined): boolean {
  return backend.canonicalSha256Sync !== undefined && (signature === undefined || signature.form === 'service')
}

/** The fingerprint of a delivery {@link canHashLater} allowed, hashed now. */
export function fingerprintNow(rawBody: Uint8Array): string {
  return toHex((backend.canonicalSha256Sync as (body: Uint8Array) => Uint8Array)(rawBody))
}
