import { backend } from '#crypto'
import { utf8 } from './bytes.ts'
import { timingSafeEqual } from './constant-time.ts'

/**
 * A secret string kept as its SHA-256 digest, compared against what a client presents.
 *
 * Hashing both sides first gives the constant-time comparison two 32-byte inputs, so neither the
 * content nor the length of the configured secret shows in the response time.
 */
export class SecretDigest {
  readonly #digest: Promise<Uint8Array>

  constructor(secret: string) {
    this.#digest = backend.sha256(utf8(secret))
  }

  async matches(presented: string): Promise<boolean> {
    const [actual, expected] = await Promise.all([backend.sha256(utf8(presented)), this.#digest])
    return timingSafeEqual(actual, expected)
  }
}
