import { createHash } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { DEFAULT_TOKEN_TTL } from '@hookguard/core'
import { basicChallenge, parseBasicAuthorization, timingSafeEqual } from '@hookguard/core/adapter'

const HOST = '127.0.0.1'
const TOKEN_PATH = '/v2/oauth2/token'
const CUSTOMERS_PATH = '/v2/customers'
const MAX_BODY_SIZE = 1_048_576
const REALM = 'mock-service'

const DEFAULT_CUSTOMERS: readonly MockCustomer[] = [
  { id: 'c-1001', name: 'Li Lei', mobile: '+8613800138000' },
  { id: 'c-1002', name: 'Han Meimei', mobile: '13900139000' },
  { id: 'c-1003', name: 'Wei Hua', mobile: '+8613700137000' },
]

/** A customer the emulator can find; every other field is answered as given. */
export type MockCustomer = { mobile: string } & Record<string, unknown>

export interface MockServiceOptions {
  /** The app id the token endpoint accepts (the Basic username). */
  appId: string
  /** The app secret the token endpoint accepts (the Basic password). */
  appSecret: string
  /** Port on 127.0.0.1; default 0, an ephemeral port read back into `url`. */
  port?: number
  /** Milliseconds since the epoch; default `Date.now`. Decides when tokens expire. */
  clock?: () => number
  /** Seconds a token lives, answered as `expires_in`; default 7200. */
  tokenTtl?: number
  /** Send `expires_in` as a string (`"7200"`), as some of the service's deployments do; default false. */
  expiresInAsString?: boolean
  /** What `GET /v2/customers` searches; default three fixed customers, one of them `+8613800138000`. */
  customers?: readonly MockCustomer[]
}

/** One request as the emulator received it, for assertions. */
export interface RecordedRequest {
  method: string
  /** The path without the query, as sent (not decoded). */
  path: string
  /** The query string as sent, without `?`: `%2B` stays `%2B`, a raw `+` stays `+`. */
  rawQuery: string
  /** The query decoded the way the service decodes it (form rules: a raw `+` is a space); repeated names keep the last value. */
  query: Record<string, string>
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>
  /** The body as UTF-8 text; `''` when there is none. */
  body: string
}

export interface MockService {
  /** `http://127.0.0.1:<port>`, without a trailing slash: the client's `baseUrl`. */
  readonly url: string
  /** Every request received, oldest first. The live array: empty it with `requests.length = 0`. */
  readonly requests: RecordedRequest[]
  /** Forgets every token issued so far, so the next call that presents one is answered 401 `invalid_token`. */
  expireTokens(): void
  /** Stops listening and drops open connections; resolves once the server is closed. */
  close(): Promise<void>
}

interface Answer {
  status: number
  headers?: Record<string, string>
  body: unknown
}

/**
 * Serves the service's API v2 on loopback, deterministically, for tests of code that calls it:
 *
 * - `POST /v2/oauth2/token`: `Authorization: Basic base64(appId:appSecret)` and the form body
 *   `grant_type=client_credentials`; answers `{ access_token, expires_in }`. Tokens are
 *   `mock-token-1`, `mock-token-2`, … in the order they are issued.
 * - `GET /v2/customers?mobile=…` with `Authorization: Bearer <token>`; answers
 *   `{ total, data }`, the customers whose `mobile` equals the decoded parameter exactly.
 *
 * Every failure is JSON `{ error, message }`: 400 `invalid_request` / `unsupported_grant_type`,
 * 401 `invalid_client` / `missing_token` / `invalid_token`, 404 `not_found`, 405 `method_not_allowed`.
 *
 * @example
 * let now = Date.parse('2030-01-01T00:00:00Z')
 * const service = await mockService({ appId: 'app', appSecret: 's3cret', clock: () => now })
 * const client = createClient({ baseUrl: service.url, appId: 'app', appSecret: 's3cret', clock: () => now })
 * await client.customers.query({ mobile: '+8613800138000' })
 * expect(service.requests.at(-1)?.query.mobile).toBe('+8613800138000')
 * await service.close()
 */
export async function mockService(options: MockServiceOptions): Promise<MockService> {
  const {
    appId,
    appSecret,
    port = 0,
    clock = Date.now,
    tokenTtl = DEFAULT_TOKEN_TTL,
    expiresInAsString = false,
    customers = DEFAULT_CUSTOMERS,
  } = options
  if (typeof appId !== 'string' || appId === '') throw new TypeError('@hookguard/emulator: mockService needs an appId')
  if (typeof appSecret !== 'string' || appSecret === '') throw new TypeError('@hookguard/emulator: mockService needs an appSecret')
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new TypeError('@hookguard/emulator: port must be an integer from 0 to 65535')
  if (!Number.isFinite(tokenTtl) || tokenTtl < 0)
    throw new TypeError('@hookguard/emulator: tokenTtl must be a number of seconds, 0 or more')
  if (typeof clock !== 'function') throw new TypeError('@hookguard/emulator: clock must be a function returning milliseconds')

  const appIdDigest = digest(appId)
  const secretDigest = digest(appSecret)
  const requests: RecordedRequest[] = []
  /** Access token → the instant (ms) it expires. */
  const tokens = new Map<string, number>()
  let issued = 0

  const server = createServer((req, res) => {
    handle(req).then(
      (answer) => send(res, answer),
      () => send(res, failure(500, 'internal_error', 'The emulator failed to handle the request.')),
    )
  })

  async function handle(req: IncomingMessage): Promise<Answer> {
    const raw = req.url ?? '/'
    // Split by hand: `new URL('//x/y', base)` would read `x` as a host and lose part of the path.
    const mark = raw.indexOf('?')
    const path = mark === -1 ? raw : raw.slice(0, mark)
    const rawQuery = mark === -1 ? '' : raw.slice(mark + 1)
    const body = await readBody(req)
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      rawQuery,
      query: Object.fromEntries(new URLSearchParams(rawQuery)),
      headers: flattenHeaders(req.headers),
      body: body ?? '',
    }
    requests.push(recorded)

    if (body === undefined) return failure(413, 'payload_too_large', `The body is larger than ${MAX_BODY_SIZE} bytes.`)
    if (path === TOKEN_PATH) {
      if (recorded.method !== 'POST') return failure(405, 'method_not_allowed', 'Use POST.', { allow: 'POST' })
      return issueToken(recorded)
    }
    if (path === CUSTOMERS_PATH) {
      if (recorded.method !== 'GET') return failure(405, 'method_not_allowed', 'Use GET.', { allow: 'GET' })
      return findCustomers(recorded)
    }
    return failure(404, 'not_found', `No such endpoint: ${recorded.method} ${path}`)
  }

  // Error codes and their order follow RFC 6749 §5.2, like the core's token endpoint: the request's
  // shape first, then the grant type, then the client's credentials.
  function issueToken(req: RecordedRequest): Answer {
    if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
      return failure(400, 'invalid_request', 'Send the fields as application/x-www-form-urlencoded.')
    }
    const grantType = new URLSearchParams(req.body).get('grant_type')
    if (!grantType) return failure(400, 'invalid_request', 'grant_type is required.')
    if (grantType !== 'client_credentials') {
      return failure(400, 'unsupported_grant_type', 'Only grant_type=client_credentials is supported.')
    }
    const credentials = parseBasicAuthorization(req.headers.authorization)
    if (typeof credentials === 'string' || !matchesApp(credentials.username, credentials.password)) {
      // RFC 6749 §5.2: a client that tried the Authorization header is challenged with the scheme it must use.
      return failure(401, 'invalid_client', 'The app id or secret is not valid.', { 'www-authenticate': basicChallenge(REALM) })
    }

    issued += 1
    const accessToken = `mock-token-${issued}`
    tokens.set(accessToken, clock() + tokenTtl * 1000)
    return {
      status: 200,
      // RFC 6749 §5.1: an answer that carries a token must not be cached.
      headers: { 'cache-control': 'no-store', pragma: 'no-cache' },
      body: { access_token: accessToken, expires_in: expiresInAsString ? String(tokenTtl) : tokenTtl },
    }
  }

  function matchesApp(username: string, password: string): boolean {
    // Both halves are compared whatever the first says, so a right app id is not answered faster.
    const idOk = timingSafeEqual(digest(username), appIdDigest)
    const secretOk = timingSafeEqual(digest(password), secretDigest)
    return idOk && secretOk
  }

  function findCustomers(req: RecordedRequest): Answer {
    const match = /^bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')
    if (match === null) {
      return failure(401, 'missing_token', 'Send the access token as Authorization: Bearer <token>.', { 'www-authenticate': 'Bearer' })
    }
    // A plain lookup is fine here: the emulator's tokens are predictable on purpose and guard nothing.
    const expiresAt = tokens.get(match[1] as string)
    if (expiresAt === undefined || clock() >= expiresAt) {
      return failure(401, 'invalid_token', 'The access token is unknown or expired.', {
        'www-authenticate': 'Bearer error="invalid_token"',
      })
    }
    const mobile = new URLSearchParams(req.rawQuery).get('mobile')
    if (mobile === null) return failure(400, 'invalid_request', 'mobile is required.')
    // Exact match on the decoded value: a `+86…` sent unencoded decodes to ` 86…` and finds no one,
    // which is what the service does.
    const data = customers.filter((customer) => customer.mobile === mobile)
    return { status: 200, body: { total: data.length, data } }
  }

  async function readBody(req: IncomingMessage): Promise<string | undefined> {
    const chunks: Buffer[] = []
    let size = 0
    let tooLarge = false
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length
      if (size > MAX_BODY_SIZE) tooLarge = true
      // Keep draining without keeping, so the answer can still be written on this connection.
      if (!tooLarge) chunks.push(chunk)
    }
    return tooLarge ? undefined : Buffer.concat(chunks).toString('utf8')
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, HOST, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port: bound } = server.address() as AddressInfo

  let closing: Promise<void> | undefined
  return {
    url: `http://${HOST}:${bound}`,
    requests,
    expireTokens() {
      tokens.clear()
    },
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()))
        // Node closes idle keep-alive connections itself; a client stuck mid-request would hold close() open.
        server.closeAllConnections()
      })
      return closing
    },
  }
}

function failure(status: number, error: string, message: string, headers: Record<string, string> = {}): Answer {
  return { status, headers: { 'cache-control': 'no-store', ...headers }, body: { error, message } }
}

function send(res: ServerResponse, { status, headers = {}, body }: Answer): void {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  })
  res.end(text)
}

// Hashing both sides gives the constant-time comparison equal lengths, so the secret's length does not show either.
function digest(text: string): Uint8Array {
  return createHash('sha256').update(text, 'utf8').digest()
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return flat
}
