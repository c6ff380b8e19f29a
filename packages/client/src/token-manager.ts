import { ApiError, type RequestContext } from './errors.ts'
import { type Fetch, readAnswer, send } from './http.ts'

/** The service's default token life, used when its answer leaves `expires_in` out (RFC 6749 §5.1 makes it optional). */
const DEFAULT_EXPIRES_IN = 7200

/** An access token as the client keeps it, and as a `TokenStore` receives it. */
export interface StoredToken {
  accessToken: string
  /** When the service says the token expires: milliseconds since the epoch, by the client's clock. */
  expiresAt: number
  /** When the token was requested (ms); lets a short-lived token be refreshed at half its life. */
  issuedAt?: number
}

/**
 * Where the client keeps its token. Share one between processes (Redis, a database row) so they
 * use one token between them instead of each fetching its own. Either method may be async.
 */
export interface TokenStore {
  get(): StoredToken | undefined | Promise<StoredToken | undefined>
  set(token: StoredToken): void | Promise<void>
}

export interface TokenManagerOptions {
  tokenUrl: string
  /** The `Authorization: Basic …` header value. */
  authorization: string
  fetch: Fetch
  store: TokenStore
  clock: () => number
  /** Milliseconds before expiry at which a token counts as due for refresh. */
  refreshAhead: number
  context: RequestContext
}

export function memoryTokenStore(): TokenStore {
  let token: StoredToken | undefined
  return {
    get: () => token,
    set: (next) => {
      token = next
    },
  }
}

/**
 * Keeps one access token fresh. Every caller that finds it missing or due joins the same token
 * request (single flight), so a burst of calls at startup or at expiry costs one request.
 */
export class TokenManager {
  readonly #options: TokenManagerOptions
  /** The token this process obtained last, for callers whose read of the store predates its write. */
  #latest: StoredToken | undefined
  #inflight: Promise<StoredToken> | undefined

  constructor(options: TokenManagerOptions) {
    this.#options = options
  }

  /** A token that is not due for refresh, fetching one if needed. */
  async token(): Promise<string> {
    return (await this.#current(undefined)).accessToken
  }

  /** A token other than `rejected`, which the service has just refused with a 401. */
  async renew(rejected: string): Promise<string> {
    return (await this.#current(rejected)).accessToken
  }

  async #current(rejected: string | undefined): Promise<StoredToken> {
    const stored = validToken(await this.#options.store.get())
    // Another process (through a shared store) or another caller may have replaced the token already.
    const usable = [stored, this.#latest].find((token) => token !== undefined && token.accessToken !== rejected && this.#fresh(token))
    if (usable !== undefined) return usable
    try {
      return await this.#refresh()
    } catch (error) {
      // Refreshing ahead is a margin, not a deadline: while the token endpoint fails, a token that
      // has not actually expired still serves.
      const now = this.#options.clock()
      const fallback = [stored, this.#latest].find(
        (token) => token !== undefined && token.accessToken !== rejected && now < token.expiresAt,
      )
      if (fallback !== undefined) return fallback
      throw error
    }
  }

  #fresh({ expiresAt, issuedAt }: StoredToken): boolean {
    const { clock, refreshAhead } = this.#options
    // A token that lives less than twice the margin is refreshed at half its life, or every call
    // would fetch a new one.
    const margin = issuedAt === undefined ? refreshAhead : Math.min(refreshAhead, (expiresAt - issuedAt) / 2)
    return clock() < expiresAt - margin
  }

  #refresh(): Promise<StoredToken> {
    this.#inflight ??= this.#obtain().finally(() => {
      this.#inflight = undefined
    })
    return this.#inflight
  }

  async #obtain(): Promise<StoredToken> {
    const { tokenUrl, authorization, fetch, store, clock, context } = this.#options
    // The clock is read before the request, so network time only makes the token look older.
    const issuedAt = clock()
    const res = await send(
      fetch,
      tokenUrl,
      {
        method: 'POST',
        headers: {
          authorization,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: 'grant_type=client_credentials',
      },
      context,
    )
    const body = await readAnswer(res, context)
    const token = parseTokenAnswer(body, issuedAt)
    if (token === undefined) {
      // The body is left out: an answer of unexpected shape may still carry a token.
      throw new ApiError({
        code: 'invalid_token_response',
        status: res.status,
        method: context.method,
        path: context.path,
        message: `${context.method} ${context.path} answered ${res.status} without a usable access_token and expires_in`,
      })
    }
    await store.set(token)
    this.#latest = token
    return token
  }
}

/** `{ access_token, expires_in }`, with `expires_in` a number or a numeric string (both are seen in the wild). */
function parseTokenAnswer(body: unknown, issuedAt: number): StoredToken | undefined {
  let fields = body
  if (typeof fields === 'string') {
    // Some gateways label JSON as text/plain.
    try {
      fields = JSON.parse(fields)
    } catch {
      return undefined
    }
  }
  if (fields === null || typeof fields !== 'object') return undefined
  const { access_token: accessToken, expires_in: rawExpiresIn } = fields as Record<string, unknown>
  if (typeof accessToken !== 'string' || accessToken === '') return undefined
  const expiresIn = parseExpiresIn(rawExpiresIn)
  if (expiresIn === undefined) return undefined
  return { accessToken, expiresAt: issuedAt + expiresIn * 1000, issuedAt }
}

function parseExpiresIn(value: unknown): number | undefined {
  if (value === undefined || value === null) return DEFAULT_EXPIRES_IN
  const seconds = typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined
}

/** Reads what a store handed back defensively: a store that round-trips through JSON may return anything. */
function validToken(value: unknown): StoredToken | undefined {
  if (value === null || typeof value !== 'object') return undefined
  const { accessToken, expiresAt, issuedAt } = value as Record<string, unknown>
  if (typeof accessToken !== 'string' || accessToken === '' || typeof expiresAt !== 'number' || !Number.isFinite(expiresAt))
    return undefined
  return typeof issuedAt === 'number' && Number.isFinite(issuedAt) ? { accessToken, expiresAt, issuedAt } : { accessToken, expiresAt }
}
