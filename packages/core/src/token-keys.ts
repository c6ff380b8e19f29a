import type { HmacKey } from './crypto/types.ts'
import { deriveTokenKey, issueToken } from './token.ts'

/** The derived token keys of one receiver, derived on first use and then kept. */
export class TokenKeys {
  readonly #material: readonly string[]
  readonly ttl: number
  #keys: Promise<HmacKey[]> | undefined

  constructor(material: readonly string[], ttl: number) {
    this.#material = material
    this.ttl = ttl
  }

  all(): Promise<HmacKey[]> {
    this.#keys ??= Promise.all(this.#material.map(deriveTokenKey))
    return this.#keys
  }

  async issue(appId: string, nowMs: number): Promise<string> {
    const [signing] = await this.all()
    return issueToken(signing as HmacKey, appId, this.ttl, nowMs)
  }
}
