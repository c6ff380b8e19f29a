import { ApiError, networkError, type RequestContext } from './errors.ts'
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

/** Gives a lock back. Failing to is harmless: the lock expires on its own. */
export type ReleaseLock = () => void | Promise<void>

/**
 * Where the client keeps its token. Share one between processes (Redis, a database row) so they
 * use one token between them instead of each fetching its own. Every method may be async.
 *
 * A shared store should also implement `lock` and `invalidate` (`redisTokenStore` from
 * `@hookguard/redis` does): then only one process fetches a new token while the others wait for
 * it, and a token the service refuses is dropped for every process at once.
 */
export interface TokenStore {
  get(): StoredToken | undefined | Promise<StoredToken | undefined>
  set(token: StoredToken): void | Promise<void>
  /**
   * Takes the refresh lock, if no one holds it: resolves a function that releases it, or
   * `undefined` when another process holds it. The lock must expire by itself after a while (a
   * few seconds: longer than a token request takes), so a process that crashes holding it does
   * not stop the others from refreshing.
   */
  lock?(): Promise<ReleaseLock | undefined>
  /** Forgets the stored token, but only if it is still `accessToken`: the service has just refused it with a 401. */
  invalidate?(accessToken: string): void | Promise<void>
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

/** How long a lock of the in-memory store lasts by default; see `TokenStore.lock`. */
const MEMORY_LOCK_TTL = 10_000
/**
 * How long a process waits for another one's refresh before it fetches a token itself. Longer
 * than a store's lock lasts (10 s by default), so a crashed holder's lock expires within it and
 * one of the waiters takes over.
 */
export const LOCK_WAIT_MS = 15_000
/** How often a waiting process looks in the store for the new token. */
const LOCK_POLL_MS = 50
/**
 * How long a token request may take, its answer read: less than a store's lock lasts, so that a
 * lock outlives the request it guards. Callers share the request, so no one caller's signal ends it.
 */
export const TOKEN_REQUEST_MS = 8_000
/** The most of a token answer the client reads: a token and its life take well under a kilobyte. */
const MAX_TOKEN_ANSWER_BYTES = 64 * 1024
/** What an access token may hold (RFC 6750's b64token and what services send): visible ASCII, no space. */
const TOKEN_CHARACTERS = /^[\x21-\x7e]+$/

/**
 * The default store: one token in memory. Shared between clients of one process, it behaves like
 * a shared store, lock and invalidation included.
 */
export function memoryTokenStore({ lockTtl = MEMORY_LOCK_TTL }: { lockTtl?: number } = {}): TokenStore {
  let token: StoredToken | undefined
  // The lock is about real time (how long a refresh may take), not the client's token clock.
  let lockedUntil = 0
  let holder = 0
  return {
    get: () => token,
    set: (next) => {
      token = next
    },
    lock: async () => {
      const now = Date.now()
      if (now < lockedUntil) return undefined
      lockedUntil = now + lockTtl
      const mine = ++holder
      return () => {
        if (holder === mine) lockedUntil = 0
      }
    },
    invalidate: (accessToken) => {
      if (token?.accessToken === accessToken) token = undefined
    },
  }
}

/**
 * Keeps one access token fresh. Every caller that finds it missing or due joins the same token
 * request (single flight), so a burst of calls at startup or at expiry costs one request. With a
 * store that has `lock`, that holds across processes too: one fetches, the others wait for its
 * token.
 */
export class TokenManager {
  readonly #options: TokenManagerOptions
  /** The token this process obtained last, for callers whose read of the store predates its write. */
  #latest: StoredToken | undefined
  #inflight: Promise<StoredToken> | undefined

  constructor(options: TokenManagerOptions) {
    this.#options = options
  }

  /**
   * A token that is not due for refresh, fetching one if needed. `signal` ends this caller's wait
   * (with its reason, as fetch does), not the token request other callers share.
   */
  async token(signal?: AbortSignal): Promise<string> {
    return (await untilAborted(() => this.#current(undefined), signal)).accessToken
  }

  /** A token other than `rejected`, which the service has just refused with a 401. */
  async renew(rejected: string, signal?: AbortSignal): Promise<string> {
    // Dropped for every process sharing the store, not only this one.
    await this.#options.store.invalidate?.(rejected)
    return (await untilAborted(() => this.#current(rejected), signal)).accessToken
  }

  async #current(rejected: string | undefined): Promise<StoredToken> {
    const stored = validToken(await this.#options.store.get())
    // Another process (through a shared store) or another caller may have replaced the token already.
    const usable = this.#candidates(stored).find((token) => token.accessToken !== rejected && this.#fresh(token))
    if (usable !== undefined) return usable
    try {
      let token = await this.#refresh(rejected)
      // Joined a refresh that another caller started before this token was refused.
      if (token.accessToken === rejected) token = await this.#refresh(rejected)
      return token
    } catch (error) {
      // Refreshing ahead is a margin, not a deadline: while the token endpoint fails, a token that
      // has not actually expired still serves.
      const now = this.#options.clock()
      const fallback = this.#candidates(stored).find((token) => token.accessToken !== rejected && now < token.expiresAt)
      if (fallback !== undefined) return fallback
      throw error
    }
  }

  /**
   * The tokens worth trying. A store that can invalidate is the only truth: this process's last
   * token may have been refused by another process and dropped from the store.
   */
  #candidates(stored: StoredToken | undefined): StoredToken[] {
    const found = this.#options.store.invalidate === undefined ? [stored, this.#latest] : [stored]
    return found.filter((token): token is StoredToken => token !== undefined)
  }

  #fresh({ expiresAt, issuedAt }: StoredToken): boolean {
    const { clock, refreshAhead } = this.#options
    // A token that lives less than twice the margin is refreshed at half its life, or every call
    // would fetch a new one.
    const margin = issuedAt === undefined ? refreshAhead : Math.min(refreshAhead, (expiresAt - issuedAt) / 2)
    return clock() < expiresAt - margin
  }

  #refresh(rejected: string | undefined): Promise<StoredToken> {
    this.#inflight ??= this.#locked(rejected).finally(() => {
      this.#inflight = undefined
    })
    return this.#inflight
  }

  /** With a store that locks: fetch under the lock, or wait for the process that holds it. */
  async #locked(rejected: string | undefined): Promise<StoredToken> {
    const { store } = this.#options
    if (store.lock === undefined) return this.#obtain()
    const usable = async () => {
      const token = validToken(await store.get())
      return token !== undefined && token.accessToken !== rejected && this.#fresh(token) ? token : undefined
    }
    const deadline = Date.now() + LOCK_WAIT_MS
    for (;;) {
      const release = await store.lock()
      if (release !== undefined) {
        try {
          // The holder before us may have stored a token between our read and our lock.
          return (await usable()) ?? (await this.#obtain())
        } finally {
          // A lock that cannot be given back expires by itself.
          await Promise.resolve()
            .then(release)
            .catch(() => {})
        }
      }
      // The holder may have crashed or be slow: after a bound, fetch without the lock rather than fail.
      if (Date.now() >= deadline) return this.#obtain()
      await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS))
      const token = await usable()
      if (token !== undefined) return token
    }
  }

  async #obtain(): Promise<StoredToken> {
    const { tokenUrl, authorization, fetch, store, clock, context } = this.#options
    // The clock is read before the request, so network time only makes the token look older.
    const issuedAt = clock()
    // A timer of its own rather than AbortSignal.timeout: the tests' fake clocks move it.
    const limit = new AbortController()
    const timer = setTimeout(() => limit.abort(), TOKEN_REQUEST_MS)
    let res: Response
    let body: unknown
    try {
      res = await send(
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
          signal: limit.signal,
        },
        context,
      )
      body = await readAnswer(res, context, MAX_TOKEN_ANSWER_BYTES)
    } catch (error) {
      // A stalled token endpoint fails every caller waiting on it, as a failed request does.
      if (limit.signal.aborted) throw networkError(new Error(`no answer to the token request within ${TOKEN_REQUEST_MS} ms`), context)
      throw error
    } finally {
      clearTimeout(timer)
    }
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
  // A token that cannot go into a header would fail in fetch, whose message quotes it.
  if (typeof accessToken !== 'string' || !TOKEN_CHARACTERS.test(accessToken)) return undefined
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

/** What `start` resolves, or the signal's reason as soon as it aborts; nothing started when it already has. */
function untilAborted<T>(start: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return start()
  if (signal.aborted) return Promise.reject(signal.reason)
  const promise = start()
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason)
    signal.addEventListener('abort', abort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort))
  })
}
