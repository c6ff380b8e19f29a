import type { WebhookAuth } from './auth.ts'
import type { HmacKey } from './crypto/types.ts'
import { DEFAULT_TOKEN_TTL } from './options.ts'
import { checkToken, deriveTokenKey, issueToken, type TokenCheck } from './token.ts'

/** Below this many characters, key material is short enough to guess from one leaked token. */
const SHORT_KEY_MATERIAL = 16
let warnedShort = false

/**
 * The token keys of one oauth2 setting: the first signs, all verify (rotation). Derivation starts
 * when the receiver is built, so the first request does not wait for the slow KDF.
 */
export class TokenKeys {
  readonly appId: string
  /** The app secret the token address checks clients against (not necessarily the key material). */
  readonly clientSecret: string
  readonly ttl: number
  readonly #keys: Promise<HmacKey[]>

  constructor({ appId, secret, tokenKeys, tokenTtl = DEFAULT_TOKEN_TTL }: Extract<WebhookAuth, { mode: 'oauth2' }>) {
    const material = tokenKeys ?? [secret]
    this.appId = appId
    this.clientSecret = secret
    this.ttl = tokenTtl
    this.#keys = Promise.all(material.map((entry) => deriveTokenKey(entry, appId)))
    // Awaited by every request; this keeps a failure from also surfacing as an unhandled rejection.
    this.#keys.catch(() => {})
    if (!warnedShort && material.some((entry) => entry.length < SHORT_KEY_MATERIAL)) {
      warnedShort = true
      console.warn(
        `@hookguard/core: an oauth2 secret (or tokenKeys entry) is shorter than ${SHORT_KEY_MATERIAL} characters. ` +
          // Stryker disable next-line StringLiteral: message text only — the warning itself is pinned
          'Tokens travel in query strings and logs, and one leaked token lets anyone test guesses of it offline: ' +
          // Stryker disable next-line StringLiteral: message text only — the warning itself is pinned
          'use at least 32 random characters.',
      )
    }
  }

  async issue(nowMs: number): Promise<string> {
    const [signing] = await this.#keys
    return issueToken(signing as HmacKey, this.appId, this.ttl, nowMs)
  }

  async check(token: string, nowMs: number): Promise<TokenCheck> {
    return checkToken(token, await this.#keys, this.appId, nowMs)
  }
}
