/** What went wrong: the token request, or the delivery request itself. */
export type EmulatorErrorCode = 'token_request_failed' | 'delivery_failed'

export interface EmulatorErrorInit {
  /** The HTTP status the other side answered, when it answered at all. */
  status?: number
  /** The `error` code the other side answered with, when it sent one that is safe to repeat. */
  reason?: string
  cause?: unknown
}

/**
 * A delivery that could not be made. A receiver's refusal is not one: {@link deliver} resolves
 * with its answer. The message names the address (origin and path only, since the query of an
 * OAuth delivery carries the token) and never a secret.
 */
export class EmulatorError extends Error {
  override readonly name = 'EmulatorError'
  readonly code: EmulatorErrorCode
  readonly status: number | undefined
  readonly reason: string | undefined

  constructor(code: EmulatorErrorCode, message: string, init: EmulatorErrorInit = {}) {
    super(`@hookguard/emulator: ${message}`, init.cause === undefined ? undefined : { cause: init.cause })
    this.code = code
    this.status = init.status
    this.reason = init.reason
  }
}

/** An address fit for a message: no query (tokens, secrets) and no user info. */
export function describeUrl(url: URL): string {
  return `${url.origin}${url.pathname}`
}

/**
 * `' (ECONNREFUSED)'` from a fetch failure's system error code, or nothing. The failure's own
 * message is never quoted: some fetch implementations put the URL in it, and a token request's
 * URL carries the secret.
 */
export function networkCode(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause
  const code = cause?.code ?? (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? ` (${code})` : ''
}
