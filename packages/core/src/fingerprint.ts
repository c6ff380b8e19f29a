import { backend } from '#crypto'
import { toHex } from './bytes.ts'
import type { SignatureMatch } from './signature.ts'

/**
 * What a delivery's fingerprint hashes: what its mode authenticates. In mode `secret` the text the
 * signature covered (the service's form, the body with Java's whitespace removed, so every
 * whitespace variant of one delivery has the same fingerprint; or the compatibility form that
 * matched). In modes `basic`, `oauth2` and `none` nothing is signed, so whitespace inside strings
 * is content: the bytes as received (`"Ann Lee"` and `"AnnLee"` are two deliveries), or, for a
 * token sent as a form field, the form without its `access_token`, which a retry renews.
 */
export type Covered = SignatureMatch | { form: 'exact'; text: Uint8Array }

/** The fingerprint of `covered`, for a delivery whose bytes received are `rawBody`. */
export async function fingerprintOf(rawBody: Uint8Array, covered: Covered): Promise<string> {
  const digest = covered.form === 'service' ? backend.canonicalSha256(rawBody) : backend.sha256(covered.text)
  return toHex(await digest)
}

/**
 * Whether the fingerprint can be hashed when first read, by {@link fingerprintNow}, for a receiver
 * that needs none itself (no dedupe, nobody listening): an application that never reads it pays no
 * hash per delivery. Only where hashing is synchronous (Node).
 */
// Stryker disable next-line BlockStatement: speed only — an empty body answers undefined, so the fingerprint is hashed now: the same one
export function canHashLater(covered: Covered): boolean {
  if (backend.canonicalSha256Sync === undefined) return false
  // Stryker disable next-line all: speed only — with a synchronous hash, every form hashed later gives the fingerprint hashed now
  return covered.form === 'service' || covered.form === 'exact'
}

/** The fingerprint of a delivery {@link canHashLater} allowed, hashed now. */
export function fingerprintNow(rawBody: Uint8Array, covered: Covered): string {
  const { canonicalSha256Sync, sha256Sync } = backend as Required<typeof backend>
  return toHex(covered.form === 'service' ? canonicalSha256Sync(rawBody) : sha256Sync((covered as { text: Uint8Array }).text))
}
