import { formatBasicAuthorization } from '@hookguard/core/adapter'
import { type Redact, type RequestContext, redactor } from './errors.ts'
import { type Fetch, readAnswer, send } from './http.ts'
import { encodeQuery, type Query, type QueryValue } from './query.ts'
import { memoryTokenStore, TokenManager, type TokenStore } from './token-manager.ts'

/** Seconds before a token's expiry at which the client fetches the next one. */
export const DEFAULT_REFRESH_AHEAD = 300

const TOKEN_PATH = '/v2/oauth2/token'

export interface ClientOptions {
  /** The service's origin, optionally with a path prefix: `https://api.example.com`. Requests go to `{baseUrl}/v2/…`. */
  baseUrl: string
  /** The app id, sent as the Basic username to the token endpoint. */
  appId: string
  /** The app secret, sent as the Basic password to the token endpoint and nowhere else. */
  appSecret: string
  /** The fetch to call; default the platform's `globalThis.fetch`. */
  fetch?: Fetch
  /**
   * Where the token is kept; default in memory, per client. A store shared between processes
   * (`redisTokenStore` from `@hookguard/redis`) gives them one token, refreshed by one of them.
   */
  tokenStore?: TokenStore
  /** Seconds before expiry at which to fetch the next token; default 300 (capped at half the token's life). */
  refreshAhead?: number
  /** Milliseconds since the epoch; default `Date.now`. For tests. */
  clock?: () => number
}

export interface RequestOptions {
  /** Default `GET`. */
  method?: string
  query?: Query
  /** Any JSON value, sent as `application/json`. */
  body?: unknown
  /** Extra headers; `authorization` is always the client's own. */
  headers?: Record<string, string>
  signal?: AbortSignal
}

/** `GET /v2/customers` parameters; `mobile` in international form keeps its `+`. */
export interface CustomerQuery {
  mobile?: string
  [name: string]: QueryValue | readonly QueryValue[] | null | undefined
}

export interface Client {
  /**
   * Calls `{baseUrl}/v2/{path}` with the current access token. Resolves the parsed JSON body (the
   * text for another content type, `undefined` for none) of a 2xx answer; rejects with `ApiError`
   * for any other. A 401 fetches a new token and retries once.
   */
  request<T = unknown>(path: string, options?: RequestOptions): Promise<T>
  customers: {
    /** `GET /v2/customers?mobile=…`; resolves the service's answer as it is. */
    query<T = unknown>(params: CustomerQuery, options?: Pick<RequestOptions, 'headers' | 'signal'>): Promise<T>
  }
  /** The current access token, fetched or refreshed as needed. */
  token(): Promise<string>
}

/**
 * A client for the service's REST API v2. It fetches an access token with the app's credentials
 * (`POST /v2/oauth2/token`, client credentials grant), keeps it until `refreshAhead` seconds before
 * it expires, shares one token request between concurrent calls, and on a 401 fetches a new token
 * and retries once. Only the platform's `fetch` is used, so it runs on Node, Bun, Deno and Workers.
 *
 * Options are checked here; a mistake throws a `TypeError` whose message starts with
 * `@hookguard/client:`.
 *
 * - `baseUrl`, `appId`, `appSecret`: required.
 * - `fetch`: default `globalThis.fetch`.
 * - `tokenStore`: default in memory; share one between processes to share the token (with
 *   `lock` and `invalidate`, one process refreshes it and a refused token is dropped for all).
 * - `refreshAhead`: seconds, default 300.
 * - `clock`: ms since the epoch, default `Date.now`.
 *
 * @example
 * const client = createClient({ baseUrl: 'https://api.example.com', appId: process.env.APP_ID!, appSecret: process.env.APP_SECRET! })
 * const found = await client.customers.query({ mobile: '+8613800138000' })
 */
export function createClient(options: ClientOptions): Client {
  checkOptions(options)
  const {
    baseUrl,
    appId,
    appSecret,
    // An arrow, not `globalThis.fetch` itself: Workers throw "Illegal invocation" when fetch is
    // called detached from its global.
    fetch = (input, init) => globalThis.fetch(input, init),
    tokenStore = memoryTokenStore(),
    refreshAhead = DEFAULT_REFRESH_AHEAD,
    clock = Date.now,
  } = options
  const root = baseUrl.replace(/\/+$/, '')
  const authorization = formatBasicAuthorization(appId, appSecret)
  // The base64 form too: a service that echoes the Authorization header would otherwise leak it.
  const credentials = [appSecret, authorization.slice('Basic '.length)]
  const tokens = new TokenManager({
    tokenUrl: `${root}${TOKEN_PATH}`,
    authorization,
    fetch,
    store: tokenStore,
    clock,
    refreshAhead: refreshAhead * 1000,
    context: { method: 'POST', path: TOKEN_PATH, redact: redactor(credentials) },
  })

  async function request<T = unknown>(path: string, init: RequestOptions = {}): Promise<T> {
    const { method = 'GET', query, body, headers = {}, signal } = init
    const target = `/v2/${checkPath(path)}`
    const search = encodeQuery(query)
    const url = `${root}${target}${search === '' ? '' : `?${search}`}`
    const verb = method.toUpperCase()
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const used: string[] = []
    // Built when an error is, so it also covers the token of a retry.
    const redact: Redact = (value) => redactor([...credentials, ...used])(value)
    const context: RequestContext = { method: verb, path: target, redact }

    const call = (accessToken: string): Promise<Response> => {
      used.push(accessToken)
      return send(
        fetch,
        url,
        {
          method: verb,
          headers: {
            accept: 'application/json',
            ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
            ...withoutAuthorization(headers),
            authorization: `Bearer ${accessToken}`,
          },
          body: payload,
          signal,
        },
        context,
      )
    }

    let res = await call(await tokens.token(signal))
    if (res.status === 401) {
      // The token may have been revoked early, or replaced by another process; one fresh try.
      await res.body?.cancel()
      res = await call(await tokens.renew(used[0] as string, signal))
    }
    return (await readAnswer(res, context)) as T
  }

  return {
    request,
    customers: {
      query: (params, init = {}) => request('customers', { ...init, method: 'GET', query: params }),
    },
    token: () => tokens.token(),
  }
}

function checkOptions(options: ClientOptions): void {
  if (options === null || typeof options !== 'object') fail('createClient needs an options object')
  const { baseUrl, appId, appSecret, fetch, tokenStore, refreshAhead, clock } = options
  if (typeof baseUrl !== 'string' || baseUrl === '') fail('baseUrl is required, such as https://api.example.com')
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    fail('baseUrl must be an absolute URL, such as https://api.example.com')
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail('baseUrl must be an http or https URL')
  if (url.search !== '' || url.hash !== '' || baseUrl.includes('?') || baseUrl.includes('#'))
    fail('baseUrl cannot have a query or fragment')
  // fetch refuses URLs with credentials, and the app's credentials travel in headers anyway.
  if (url.username !== '' || url.password !== '') fail('baseUrl cannot contain credentials')
  if (typeof appId !== 'string' || appId === '') fail('appId is required')
  // RFC 7617 §2: the user-id of Basic credentials cannot contain a colon.
  if (appId.includes(':')) fail('appId cannot contain a colon')
  if (typeof appSecret !== 'string' || appSecret === '') fail('appSecret is required')
  if (fetch !== undefined && typeof fetch !== 'function') fail('fetch must be a function')
  if (tokenStore !== undefined && (typeof tokenStore?.get !== 'function' || typeof tokenStore?.set !== 'function')) {
    fail('tokenStore must have get() and set(token) methods')
  }
  for (const method of ['lock', 'invalidate'] as const) {
    if (tokenStore?.[method] !== undefined && typeof tokenStore[method] !== 'function')
      fail(`tokenStore.${method}, when given, must be a function`)
  }
  if (refreshAhead !== undefined && (typeof refreshAhead !== 'number' || !Number.isFinite(refreshAhead) || refreshAhead < 0)) {
    fail('refreshAhead must be a number of seconds, 0 or more')
  }
  if (clock !== undefined && typeof clock !== 'function') fail('clock must be a function returning milliseconds')
}

function checkPath(path: string): string {
  if (typeof path !== 'string' || path.replace(/^\/+/, '') === '') fail('request needs a path, such as "customers"')
  // The query goes through `options.query`, the one place that encodes it safely.
  if (path.includes('?') || path.includes('#')) fail('pass query parameters as options.query, not in the path')
  return path.replace(/^\/+/, '')
}

function withoutAuthorization(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'authorization'))
}

function fail(message: string): never {
  throw new TypeError(`@hookguard/client: ${message}`)
}
