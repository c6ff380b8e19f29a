import { gzipSync } from 'node:zlib'
import { type StandardSchemaV1, sign, type WebhookAuth, type WebhookErrorCode, type WebhookOptions } from '@hookguard/core'
import { sensitive } from '@hookguard/testkit/fetch'
import type { Outgoing, Reply, Target } from '@hookguard/testkit/http'
import fixtures from '@hookguard/testkit/signatures.json' with { type: 'json' }
import { issueToken, tokenPath } from '../support/tokens.ts'

/**
 * Any string the pattern matches, as an asymmetric matcher: vitest's toEqual and toMatchObject
 * honour `asymmetricMatch`, and so does the runtime matrix's own comparison, so the table stays
 * plain data that runs where vitest cannot.
 */
function matching(pattern: RegExp) {
  return {
    asymmetricMatch: (actual: unknown) => typeof actual === 'string' && pattern.test(actual),
    toString: () => `a string matching ${pattern}`,
  }
}

/** One row of the table: the app's options, what the sender does, and what must come back. */
export interface Case {
  name: string
  options: () => WebhookOptions
  send: (app: Target) => Promise<Reply>
  expect: Expected
}

export interface Group {
  name: string
  cases: Case[]
}

export interface Expected {
  status: number
  /** The handler ran once and saw this payload… */
  payload?: unknown
  /** …and exactly these bytes (as text). */
  raw?: string
  /** Refused by hookguard with this code; the handler never ran. */
  error?: WebhookErrorCode
  headers?: Record<string, string>
  /** Fields the JSON answer must have (the token endpoint's). */
  json?: Record<string, unknown>
  /**
   * The whole streamed body was read (and, past the limit, discarded) before the answer, so that
   * a sender that writes it all before reading gets the answer, on a connection left clean.
   */
  drained?: true
  /** How many times the handler ran over the whole row: default 1 with `payload`, else 0. */
  handled?: number
}

/** The clock every oauth2 app reads; reset to `START` before each case. */
export const START = Date.UTC(2026, 0, 15, 9, 30)
export const clock = { now: START }

const SIGNATURE = 'x-service-hmac-signature'
const SECRET = 'whsec-demo-7c2e91'
const OLD_SECRET = 'whsec-retired-0a7713'
const NEW_SECRET = 'whsec-rotated-5be2c0'
const GLOBEX_SECRET = 'whsec-globex-91d3f4'
const BASIC = { username: 'hook-user', password: 'correct horse' }
const VERIFIED_PASSWORD = 'from-the-tenant-table'
const OAUTH = { mode: 'oauth2', appId: 'wx-app-1042', secret: 'oauth-secret-4f1d9a' } as const
const OTHER_APP = { mode: 'oauth2', appId: 'wx-app-2077', secret: OAUTH.secret } as const

/** Every secret, password and token key configured below: no failure answer may contain one. */
export const SECRETS = [SECRET, OLD_SECRET, NEW_SECRET, GLOBEX_SECRET, BASIC.password, VERIFIED_PASSWORD, OAUTH.secret]
  .concat(fixtures.basic.cases.map((c) => c.password))
  .filter((s) => s.length >= 6)

const EVENT = '{"event":"customer.created","tenant":"acme","data":{"id":884211}}'
const NOT_JSON = '{"event":"customer.created",data:oops}'

const valid = fixtures.vectors.filter((v) => v.valid)
const invalid = fixtures.vectors.filter((v) => !v.valid)
const acme = fixtures.vectors[0] as (typeof fixtures.vectors)[number]

type SecretAuth = Extract<WebhookAuth, { mode: 'secret' }>

const secretOptions = (secret: SecretAuth['secret']): WebhookOptions => ({ auth: { mode: 'secret', secret } })
const basicOptions = (auth: Partial<Extract<WebhookAuth, { mode: 'basic' }>> = {}): WebhookOptions => ({
  auth: { mode: 'basic', ...BASIC, ...auth } as WebhookAuth,
})
// One function for every app: apps with equal options are shared across a file's tests.
const readClock = () => clock.now
const oauthOptions = (auth: Partial<Extract<WebhookAuth, { mode: 'oauth2' }>> = {}): WebhookOptions => ({
  auth: { ...OAUTH, ...auth },
  clock: readClock,
})
const noneOptions = (extra: Omit<WebhookOptions, 'auth'> = {}): WebhookOptions => ({ auth: { mode: 'none' }, ...extra })

function post(body: string | Uint8Array, headers: Record<string, string> = {}, path = '/hooks'): Outgoing {
  return { method: 'POST', path, headers: { 'content-type': 'application/json', ...headers }, body }
}
const request = (outgoing: Outgoing) => (app: Target) => app.send(outgoing)
const basicHeader = (credentials: string) => `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`
const delivered = (body: string): Expected => ({ status: 200, payload: JSON.parse(body), raw: body })

/** Does what the service does before a delivery: GET the token acquisition address. */
async function fetchToken(app: Target): Promise<string> {
  const reply = await app.send({ method: 'GET', path: tokenPath(OAUTH.appId, OAUTH.secret) })
  if (reply.status !== 200) throw new Error(`the token endpoint answered ${reply.status}: ${reply.text}`)
  return (JSON.parse(reply.text) as { access_token: string }).access_token
}

/** A token issued by another receiver (another instance, or another app's settings). */
const tokenFrom = (auth: Extract<WebhookAuth, { mode: 'oauth2' }>) => issueToken(auth, () => clock.now)

/** Changes one character of the claims, leaving the MAC as it was. */
function tamper(token: string): string {
  return `${token.slice(0, 4)}${token[4] === 'A' ? 'B' : 'A'}${token.slice(5)}`
}

/** A JSON string value exactly `size` bytes long. */
const jsonOfSize = (size: number) => `"${'x'.repeat(size - 2)}"`
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`
const chunksOf = (text: string, size: number) => {
  const bytes = new TextEncoder().encode(text)
  const chunks: Uint8Array[] = []
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size))
  return chunks
}

const BASIC_CHALLENGE = { 'www-authenticate': 'Basic realm="webhook", charset="UTF-8"' }
const BEARER_CHALLENGE = { 'www-authenticate': 'Bearer' }
const INVALID_TOKEN_CHALLENGE = { 'www-authenticate': 'Bearer error="invalid_token"' }

const secretMode: Group = {
  name: "mode 'secret'",
  cases: [
    ...valid.map(
      (v): Case => ({
        name: `accepts the service's signature over ${v.name} (${v.why})`,
        options: () => ({ auth: { mode: 'secret', secret: v.secret, unicodeWhitespace: v.unicodeWhitespace === true } }),
        send: request(post(v.body, { [SIGNATURE]: v.signature })),
        expect: delivered(v.body),
      }),
    ),
    ...invalid.map(
      (v): Case => ({
        name: `answers 401 invalid_signature for ${v.name} (${v.why})`,
        options: () => secretOptions(v.secret),
        send: request(post(v.body, { [SIGNATURE]: v.signature })),
        expect: { status: 401, error: 'invalid_signature' },
      }),
    ),
    ...valid
      .filter((v) => v.unicodeWhitespace === true)
      .map(
        (v): Case => ({
          name: `answers 401 invalid_signature for ${v.name} unless unicodeWhitespace is on`,
          options: () => secretOptions(v.secret),
          send: request(post(v.body, { [SIGNATURE]: v.signature })),
          expect: { status: 401, error: 'invalid_signature' },
        }),
      ),
    {
      name: 'answers 401 missing_signature when the signature header is missing',
      options: () => secretOptions(SECRET),
      send: request(post(acme.body)),
      expect: { status: 401, error: 'missing_signature' },
    },
    {
      name: 'answers 401 missing_signature when the signature header is empty',
      options: () => secretOptions(SECRET),
      send: request(post(acme.body, { [SIGNATURE]: '' })),
      expect: { status: 401, error: 'missing_signature' },
    },
    {
      name: 'answers 401 missing_signature when the signature header holds only spaces',
      options: () => secretOptions(SECRET),
      send: request(post(acme.body, { [SIGNATURE]: '   ' })),
      expect: { status: 401, error: 'missing_signature' },
    },
    {
      name: 'answers 401 invalid_signature when the signature is not hex',
      options: () => secretOptions(SECRET),
      send: request(post(acme.body, { [SIGNATURE]: `${acme.signature.slice(0, -2)}zz` })),
      expect: { status: 401, error: 'invalid_signature' },
    },
    {
      name: 'answers 401 invalid_signature when the signature is cut short',
      options: () => secretOptions(SECRET),
      send: request(post(acme.body, { [SIGNATURE]: acme.signature.slice(0, 32) })),
      expect: { status: 401, error: 'invalid_signature' },
    },
    {
      name: 'accepts the signature in upper-case hex',
      options: () => secretOptions(SECRET),
      send: request(post(acme.body, { [SIGNATURE]: acme.signature.toUpperCase() })),
      expect: delivered(acme.body),
    },
    {
      name: 'accepts a header of comma-separated signatures when one of them matches',
      options: () => secretOptions(SECRET),
      send: request(post(acme.body, { [SIGNATURE]: `${'0'.repeat(64)}, ${acme.signature}` })),
      expect: delivered(acme.body),
    },
    {
      name: 'answers 401 invalid_signature for comma-separated signatures when none matches',
      options: () => secretOptions(SECRET),
      send: request(post(acme.body, { [SIGNATURE]: `${'0'.repeat(64)},${'f'.repeat(64)}` })),
      expect: { status: 401, error: 'invalid_signature' },
    },
    {
      name: 'accepts a delivery signed with the old secret while rotating to a new one',
      options: () => secretOptions([NEW_SECRET, SECRET]),
      send: request(post(acme.body, { [SIGNATURE]: acme.signature })),
      expect: delivered(acme.body),
    },
    {
      name: 'accepts a delivery signed with the new secret while rotating',
      options: () => secretOptions([SECRET, OLD_SECRET]),
      send: request(post(acme.body, { [SIGNATURE]: acme.signature })),
      expect: delivered(acme.body),
    },
    {
      name: 'answers 401 invalid_signature for a secret that was rotated out',
      options: () => secretOptions([NEW_SECRET, OLD_SECRET]),
      send: request(post(acme.body, { [SIGNATURE]: acme.signature })),
      expect: { status: 401, error: 'invalid_signature' },
    },
    {
      name: "accepts each tenant's delivery with the secret a resolver finds for the request (acme)",
      options: () => secretOptions(tenantSecret),
      send: request(post(acme.body, { [SIGNATURE]: acme.signature }, '/hooks?tenant=acme')),
      expect: delivered(acme.body),
    },
    {
      name: "accepts each tenant's delivery with the secret a resolver finds for the request (globex)",
      options: () => secretOptions(tenantSecret),
      send: async (app) => app.send(post(EVENT, { [SIGNATURE]: await sign(EVENT, GLOBEX_SECRET) }, '/hooks?tenant=globex')),
      expect: delivered(EVENT),
    },
    {
      name: "answers 401 invalid_signature for one tenant's delivery sent to another tenant",
      options: () => secretOptions(tenantSecret),
      send: request(post(acme.body, { [SIGNATURE]: acme.signature }, '/hooks?tenant=globex')),
      expect: { status: 401, error: 'invalid_signature' },
    },
    {
      name: "passes a resolver's own error to the framework's error handling, and never runs the handler",
      options: () =>
        secretOptions(() => {
          throw new Error('the tenant table is offline')
        }),
      send: request(post(acme.body, { [SIGNATURE]: acme.signature })),
      expect: { status: 500 },
    },
    {
      name: 'reads the signature from signatureHeader when one is configured',
      options: () => ({ ...secretOptions(SECRET), signatureHeader: 'X-Acme-Signature' }),
      send: request(post(acme.body, { 'x-acme-signature': acme.signature })),
      expect: delivered(acme.body),
    },
    {
      name: 'answers 401 missing_signature when only the default header is sent but another is configured',
      options: () => ({ ...secretOptions(SECRET), signatureHeader: 'X-Acme-Signature' }),
      send: request(post(acme.body, { [SIGNATURE]: acme.signature })),
      expect: { status: 401, error: 'missing_signature' },
    },
    {
      name: 'delivers a body sent without a Content-Type',
      options: () => secretOptions(SECRET),
      send: request({ path: '/hooks', headers: { [SIGNATURE]: acme.signature }, body: acme.body }),
      expect: delivered(acme.body),
    },
    {
      name: 'checks the signature before parsing: a badly signed body that is not JSON answers 401',
      options: () => secretOptions(SECRET),
      send: request(post(NOT_JSON, { [SIGNATURE]: acme.signature })),
      expect: { status: 401, error: 'invalid_signature' },
    },
    {
      name: 'answers 400 invalid_json for a correctly signed body that is not JSON',
      options: () => secretOptions(SECRET),
      send: async (app) => app.send(post(NOT_JSON, { [SIGNATURE]: await sign(NOT_JSON, SECRET) })),
      expect: { status: 400, error: 'invalid_json' },
    },
    {
      name: 'answers 415 unsupported_encoding for a gzip body, without inflating it',
      options: () => secretOptions(SECRET),
      send: request(post(gzipSync(acme.body), { [SIGNATURE]: acme.signature, 'content-encoding': 'gzip' })),
      expect: { status: 415, error: 'unsupported_encoding' },
    },
  ],
}

function tenantSecret(req: { url: URL }): string {
  const tenants: Record<string, string> = { acme: SECRET, globex: GLOBEX_SECRET }
  return tenants[req.url.searchParams.get('tenant') ?? ''] ?? NEW_SECRET
}

const basicMode: Group = {
  name: "mode 'basic'",
  cases: [
    // An empty password is refused at setup (setup.test.ts): the service can send one, no receiver accepts it.
    ...fixtures.basic.cases
      .filter((c) => c.password !== '')
      .map(
        (c): Case => ({
          name: `accepts the service's Authorization header for ${JSON.stringify(c.username)}`,
          options: () => basicOptions({ username: c.username, password: c.password }),
          send: request(post(EVENT, { authorization: c.header })),
          expect: delivered(EVENT),
        }),
      ),
    {
      name: 'accepts a password sent in Normalization Form C for one configured decomposed (RFC 7617 §2.1)',
      options: () => basicOptions({ password: 'pa\u0308sswo\u0308rd' }),
      send: request(post(EVENT, { authorization: basicHeader(`${BASIC.username}:p\u00e4ssw\u00f6rd`) })),
      expect: delivered(EVENT),
    },
    {
      name: "accepts the scheme in lower case ('basic')",
      options: () => basicOptions(),
      send: request(post(EVENT, { authorization: basicHeader(`${BASIC.username}:${BASIC.password}`).replace('Basic', 'basic') })),
      expect: delivered(EVENT),
    },
    {
      name: 'answers 401 missing_credentials with a Basic challenge when Authorization is missing',
      options: () => basicOptions(),
      send: request(post(EVENT)),
      expect: { status: 401, error: 'missing_credentials', headers: BASIC_CHALLENGE },
    },
    {
      name: 'answers 401 missing_credentials with a Basic challenge for another scheme',
      options: () => basicOptions(),
      send: request(post(EVENT, { authorization: 'Bearer abcdef0123456789' })),
      expect: { status: 401, error: 'missing_credentials', headers: BASIC_CHALLENGE },
    },
    {
      name: 'answers 401 invalid_credentials with a Basic challenge for a wrong password',
      options: () => basicOptions(),
      send: request(post(EVENT, { authorization: basicHeader(`${BASIC.username}:correct horse battery`) })),
      expect: { status: 401, error: 'invalid_credentials', headers: BASIC_CHALLENGE },
    },
    {
      name: 'answers 401 invalid_credentials with a Basic challenge for a wrong username',
      options: () => basicOptions(),
      send: request(post(EVENT, { authorization: basicHeader(`someone-else:${BASIC.password}`) })),
      expect: { status: 401, error: 'invalid_credentials', headers: BASIC_CHALLENGE },
    },
    {
      name: 'answers 401 invalid_credentials for credentials that are not base64',
      options: () => basicOptions(),
      send: request(post(EVENT, { authorization: 'Basic ***not base64***' })),
      expect: { status: 401, error: 'invalid_credentials', headers: BASIC_CHALLENGE },
    },
    {
      name: 'answers 401 invalid_credentials for credentials without a colon',
      options: () => basicOptions(),
      send: request(post(EVENT, { authorization: basicHeader(`${BASIC.username}${BASIC.password}`) })),
      expect: { status: 401, error: 'invalid_credentials', headers: BASIC_CHALLENGE },
    },
    {
      name: 'names the configured realm in the challenge',
      options: () => basicOptions({ realm: 'acme hooks' }),
      send: request(post(EVENT)),
      expect: { status: 401, error: 'missing_credentials', headers: { 'www-authenticate': 'Basic realm="acme hooks", charset="UTF-8"' } },
    },
    {
      name: 'accepts what a custom verify function accepts, given the request',
      options: () => ({ auth: { mode: 'basic', verify: verifyTenant } }),
      send: request(post(EVENT, { authorization: basicHeader(`acme:${VERIFIED_PASSWORD}`) }, '/hooks?tenant=acme')),
      expect: delivered(EVENT),
    },
    {
      name: 'answers 401 invalid_credentials with a Basic challenge when a custom verify function refuses',
      options: () => ({ auth: { mode: 'basic', verify: verifyTenant } }),
      send: request(post(EVENT, { authorization: basicHeader(`acme:${VERIFIED_PASSWORD}`) }, '/hooks?tenant=globex')),
      expect: { status: 401, error: 'invalid_credentials', headers: BASIC_CHALLENGE },
    },
    {
      name: 'checks credentials before parsing: wrong credentials and a body that is not JSON answer 401',
      options: () => basicOptions(),
      send: request(post(NOT_JSON, { authorization: basicHeader('hook-user:wrong-password') })),
      expect: { status: 401, error: 'invalid_credentials', headers: BASIC_CHALLENGE },
    },
    {
      name: 'answers 400 invalid_json for right credentials and a body that is not JSON',
      options: () => basicOptions(),
      send: request(post(NOT_JSON, { authorization: basicHeader(`${BASIC.username}:${BASIC.password}`) })),
      expect: { status: 400, error: 'invalid_json' },
    },
  ],
}

async function verifyTenant(username: string, password: string, req: { url: URL }): Promise<boolean> {
  return username === req.url.searchParams.get('tenant') && password === VERIFIED_PASSWORD
}

const oauthMode: Group = {
  name: "mode 'oauth2'",
  cases: [
    {
      name: 'accepts a delivery carrying a token from the token endpoint in the access_token query',
      options: () => oauthOptions(),
      send: async (app) => app.send(post(EVENT, {}, `/hooks?access_token=${encodeURIComponent(await fetchToken(app))}`)),
      expect: delivered(EVENT),
    },
    {
      name: 'accepts the token in Authorization: Bearer',
      options: () => oauthOptions(),
      send: async (app) => app.send(post(EVENT, { authorization: `Bearer ${await fetchToken(app)}` })),
      expect: delivered(EVENT),
    },
    {
      name: "accepts the scheme in lower case ('bearer')",
      options: () => oauthOptions(),
      send: async (app) => app.send(post(EVENT, { authorization: `bearer ${await fetchToken(app)}` })),
      expect: delivered(EVENT),
    },
    {
      name: 'accepts the token as an access_token form field, and delivers the other fields as the payload',
      options: () => oauthOptions(),
      send: async (app) => {
        const form = `event=customer.created&id=884211&access_token=${encodeURIComponent(await fetchToken(app))}`
        return app.send(post(form, { 'content-type': 'application/x-www-form-urlencoded' }))
      },
      expect: { status: 200, payload: { event: 'customer.created', id: '884211' } },
    },
    {
      name: 'accepts a token that another instance with the same settings issued',
      options: () => oauthOptions(),
      send: async (app) => app.send(post(EVENT, {}, `/hooks?access_token=${await tokenFrom(OAUTH)}`)),
      expect: delivered(EVENT),
    },
    {
      name: 'accepts a token signed with an older entry of tokenKeys',
      options: () => oauthOptions({ tokenKeys: [NEW_SECRET, OLD_SECRET] }),
      send: async (app) => app.send(post(EVENT, {}, `/hooks?access_token=${await tokenFrom({ ...OAUTH, tokenKeys: [OLD_SECRET] })}`)),
      expect: delivered(EVENT),
    },
    {
      name: 'accepts a token one second before it expires',
      options: () => oauthOptions(),
      send: async (app) => {
        const token = await fetchToken(app)
        clock.now += 7199_000
        return app.send(post(EVENT, {}, `/hooks?access_token=${token}`))
      },
      expect: delivered(EVENT),
    },
    {
      name: 'answers 401 missing_token with a Bearer challenge when no token is sent',
      options: () => oauthOptions(),
      send: request(post(EVENT)),
      expect: { status: 401, error: 'missing_token', headers: BEARER_CHALLENGE },
    },
    {
      name: 'answers 401 missing_token for an empty access_token query',
      options: () => oauthOptions(),
      send: request(post(EVENT, {}, '/hooks?access_token=')),
      expect: { status: 401, error: 'missing_token', headers: BEARER_CHALLENGE },
    },
    {
      name: 'answers 401 invalid_token for an expired token (tokenTtl elapsed)',
      options: () => oauthOptions({ tokenTtl: 600 }),
      send: async (app) => {
        const token = await fetchToken(app)
        clock.now += 600_000
        return app.send(post(EVENT, {}, `/hooks?access_token=${token}`))
      },
      expect: { status: 401, error: 'invalid_token', headers: INVALID_TOKEN_CHALLENGE },
    },
    {
      name: 'answers 401 invalid_token for a token issued to another app',
      options: () => oauthOptions(),
      send: async (app) => app.send(post(EVENT, {}, `/hooks?access_token=${await tokenFrom(OTHER_APP)}`)),
      expect: { status: 401, error: 'invalid_token', headers: INVALID_TOKEN_CHALLENGE },
    },
    {
      name: 'answers 401 invalid_token for a tampered token',
      options: () => oauthOptions(),
      send: async (app) => app.send(post(EVENT, { authorization: `Bearer ${tamper(await fetchToken(app))}` })),
      expect: { status: 401, error: 'invalid_token', headers: INVALID_TOKEN_CHALLENGE },
    },
    {
      name: 'answers 401 invalid_token for a token that is not one of ours',
      options: () => oauthOptions(),
      send: request(post(EVENT, {}, '/hooks?access_token=eyJhbGciOiJub25lIn0.e30.')),
      expect: { status: 401, error: 'invalid_token', headers: INVALID_TOKEN_CHALLENGE },
    },
    {
      name: 'checks the token before parsing: no token and a body that is not JSON answer 401',
      options: () => oauthOptions(),
      send: request(post(NOT_JSON)),
      expect: { status: 401, error: 'missing_token', headers: BEARER_CHALLENGE },
    },
  ],
}

const TOKEN_ANSWER = { access_token: matching(/^\S{16,}$/), token_type: 'Bearer', expires_in: 7200 }
const TOKEN_HEADERS = { 'cache-control': 'no-store', pragma: 'no-cache' }
/** The token address's challenge on every 401 invalid_client, whichever way the client authenticated. */
const TOKEN_CHALLENGE = { 'www-authenticate': 'Basic realm="token", charset="UTF-8"' }
const GRANT = { grant_type: 'client_credentials' }
const CLIENT_SECRET_POST = { client_id: OAUTH.appId, client_secret: OAUTH.secret, ...GRANT }
const SERVICE_FIELDS = { appid: OAUTH.appId, secret: OAUTH.secret, ...GRANT }

/** application/x-www-form-urlencoded, as the WHATWG URL standard writes it (a space is `+`). */
const formEncode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2)
/** `client_secret_basic` (RFC 6749 §2.3.1): each half form-urlencoded, then joined and base64-encoded. */
const clientSecretBasic = (id: string, secret: string) => ({ authorization: basicHeader(`${formEncode(id)}:${formEncode(secret)}`) })

function tokenForm(fields: Record<string, string> | [string, string][], headers: Record<string, string> = {}): Outgoing {
  const body = new URLSearchParams(fields).toString()
  return { method: 'POST', path: '/token', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body }
}

/** A GET of the token address with these query fields, in this order (repeats kept). */
const tokenQuery = (fields: [string, string][], headers: Record<string, string> = {}): Outgoing => ({
  method: 'GET',
  path: `/token?${new URLSearchParams(fields)}`,
  headers,
})

/** Obtains a token the way an OAuth 2.0 client library does, then delivers with it as a Bearer token. */
const deliverWithTokenFrom = (outgoing: Outgoing) => async (app: Target) => {
  const reply = await app.send(outgoing)
  if (reply.status !== 200) throw new Error(`the token endpoint answered ${reply.status}: ${reply.text}`)
  const { access_token } = JSON.parse(reply.text) as { access_token: string }
  return app.send(post(EVENT, { authorization: `Bearer ${access_token}` }))
}

/**
 * A refusal of the token address (RFC 6749 §5.2): `error_description` beside `message`. The
 * table's shared check takes error answers to be the receiving address's `{ error, message }`, so
 * a token row names its code in `json` and checks the rest of the body here: the same text twice,
 * and nothing the client sent (its secret, its client id, the query, the Authorization value).
 */
function tokenRefused(status: number, error: WebhookErrorCode, headers: Record<string, string> = {}): Expected {
  const text = matching(/\S/)
  return { status, json: { error, error_description: text, message: text }, headers: { 'cache-control': 'no-store', ...headers } }
}

const refuseToken = (outgoing: Outgoing) => async (app: Target) => {
  const reply = await app.send(outgoing)
  const body = JSON.parse(reply.text) as Record<string, unknown>
  if (Object.keys(body).sort().join() !== 'error,error_description,message' || body.error_description !== body.message) {
    throw new Error(`the token address answered ${reply.text}`)
  }
  if (!/^application\/json/.test(reply.headers['content-type'] ?? '')) throw new Error(`content-type is ${reply.headers['content-type']}`)
  const answer = [reply.text, ...Object.values(reply.headers)].join('\n')
  for (const value of [...sensitive([outgoing], SECRETS), ...presentedClient(outgoing)]) {
    if (answer.includes(value)) throw new Error('the token address answered with something the client sent')
  }
  return reply
}

/** The client ids and secrets a token request carries in its query or form. */
function presentedClient({ path, body }: Outgoing): string[] {
  const form = new URLSearchParams(typeof body === 'string' ? body : '')
  const query = new URL(path, 'http://localhost').searchParams
  const names = ['appid', 'secret', 'client_id', 'client_secret']
  const values = [query, form].flatMap((fields) => names.flatMap((name) => fields.getAll(name)))
  return [OAUTH.appId, OTHER_APP.appId, ...values].filter((value) => value.length >= 6)
}

const tokenEndpoint: Group = {
  name: 'the token endpoint',
  cases: [
    {
      name: "answers 200 with a Bearer token to the service's GET",
      options: () => oauthOptions(),
      send: request({ method: 'GET', path: tokenPath(OAUTH.appId, OAUTH.secret) }),
      expect: { status: 200, json: TOKEN_ANSWER, headers: TOKEN_HEADERS },
    },
    {
      name: 'answers expires_in from tokenTtl',
      options: () => oauthOptions({ tokenTtl: 600 }),
      send: request({ method: 'GET', path: tokenPath(OAUTH.appId, OAUTH.secret) }),
      expect: { status: 200, json: { ...TOKEN_ANSWER, expires_in: 600 } },
    },
    {
      name: 'answers 200 to the same fields in a form-urlencoded POST',
      options: () => oauthOptions(),
      send: request(tokenForm(SERVICE_FIELDS)),
      expect: { status: 200, json: TOKEN_ANSWER, headers: TOKEN_HEADERS },
    },
    {
      name: 'answers 200 with a Bearer token to client_secret_basic (RFC 6749 §2.3.1)',
      options: () => oauthOptions(),
      send: request(tokenForm(GRANT, clientSecretBasic(OAUTH.appId, OAUTH.secret))),
      expect: { status: 200, json: TOKEN_ANSWER, headers: TOKEN_HEADERS },
    },
    {
      name: 'decodes each half of client_secret_basic from form-urlencoding: colons, pluses, spaces and percent signs',
      options: () => oauthOptions({ appId: 'wx app:1042', secret: 'oauth+secret:4f1d 9a%' }),
      send: request(tokenForm(GRANT, clientSecretBasic('wx app:1042', 'oauth+secret:4f1d 9a%'))),
      expect: { status: 200, json: TOKEN_ANSWER, headers: TOKEN_HEADERS },
    },
    {
      name: 'answers 200 with a Bearer token to client_secret_post (RFC 6749 §2.3.1)',
      options: () => oauthOptions(),
      send: request(tokenForm(CLIENT_SECRET_POST)),
      expect: { status: 200, json: TOKEN_ANSWER, headers: TOKEN_HEADERS },
    },
    {
      name: 'delivers with a token obtained by client_secret_basic, sent as Authorization: Bearer',
      options: () => oauthOptions(),
      send: deliverWithTokenFrom(tokenForm(GRANT, clientSecretBasic(OAUTH.appId, OAUTH.secret))),
      expect: delivered(EVENT),
    },
    {
      name: 'delivers with a token obtained by client_secret_post, sent as Authorization: Bearer',
      options: () => oauthOptions(),
      send: deliverWithTokenFrom(tokenForm(CLIENT_SECRET_POST)),
      expect: delivered(EVENT),
    },
    {
      name: 'answers 400 invalid_request when grant_type is missing',
      options: () => oauthOptions(),
      send: refuseToken({ method: 'GET', path: tokenPath(OAUTH.appId, OAUTH.secret, null) }),
      expect: tokenRefused(400, 'invalid_request'),
    },
    {
      name: 'answers 400 invalid_request when the secret is missing',
      options: () => oauthOptions(),
      send: refuseToken({ method: 'GET', path: tokenPath(OAUTH.appId, null) }),
      expect: tokenRefused(400, 'invalid_request'),
    },
    {
      name: 'answers 400 invalid_request when the app id is missing',
      options: () => oauthOptions(),
      send: refuseToken({ method: 'GET', path: tokenPath(null, OAUTH.secret) }),
      expect: tokenRefused(400, 'invalid_request'),
    },
    {
      name: 'answers 400 unsupported_grant_type for a grant_type other than client_credentials',
      options: () => oauthOptions(),
      send: refuseToken({ method: 'GET', path: tokenPath(OAUTH.appId, OAUTH.secret, 'password') }),
      expect: tokenRefused(400, 'unsupported_grant_type'),
    },
    {
      name: 'answers 401 invalid_client with a Basic challenge for a wrong secret',
      options: () => oauthOptions(),
      send: refuseToken({ method: 'GET', path: tokenPath(OAUTH.appId, `${OAUTH.secret}-x`) }),
      expect: tokenRefused(401, 'invalid_client', TOKEN_CHALLENGE),
    },
    {
      name: 'answers 401 invalid_client with a Basic challenge for a wrong app id',
      options: () => oauthOptions(),
      send: refuseToken({ method: 'GET', path: tokenPath(OTHER_APP.appId, OAUTH.secret) }),
      expect: tokenRefused(401, 'invalid_client', TOKEN_CHALLENGE),
    },
    {
      name: 'answers 401 invalid_client with a Basic challenge to client_secret_basic with a wrong secret',
      options: () => oauthOptions(),
      send: refuseToken(tokenForm(GRANT, clientSecretBasic(OAUTH.appId, `${OAUTH.secret}-x`))),
      expect: tokenRefused(401, 'invalid_client', TOKEN_CHALLENGE),
    },
    {
      name: 'answers 401 invalid_client with a Basic challenge to client_secret_post with a wrong secret',
      options: () => oauthOptions(),
      send: refuseToken(tokenForm({ ...CLIENT_SECRET_POST, client_secret: `${OAUTH.secret}-x` })),
      expect: tokenRefused(401, 'invalid_client', TOKEN_CHALLENGE),
    },
    {
      name: 'answers 401 invalid_client with a Basic challenge to Basic credentials with a bad percent-escape',
      options: () => oauthOptions(),
      send: refuseToken(tokenForm(GRANT, { authorization: basicHeader(`${OAUTH.appId}:${OAUTH.secret}%zz`) })),
      expect: tokenRefused(401, 'invalid_client', TOKEN_CHALLENGE),
    },
    {
      name: 'answers 400 invalid_request to Basic and client_id/client_secret at once (RFC 6749 §2.3)',
      options: () => oauthOptions(),
      send: refuseToken(tokenForm(CLIENT_SECRET_POST, clientSecretBasic(OAUTH.appId, OAUTH.secret))),
      expect: tokenRefused(400, 'invalid_request'),
    },
    {
      name: 'answers 400 invalid_request to appid/secret and client_id/client_secret at once (RFC 6749 §2.3)',
      options: () => oauthOptions(),
      send: refuseToken(tokenQuery(Object.entries({ ...SERVICE_FIELDS, ...CLIENT_SECRET_POST }))),
      expect: tokenRefused(400, 'invalid_request'),
    },
    {
      name: 'answers 400 invalid_request to a repeated appid (RFC 6749 §3.1)',
      options: () => oauthOptions(),
      send: refuseToken(tokenQuery([...Object.entries(SERVICE_FIELDS), ['appid', OTHER_APP.appId]])),
      expect: tokenRefused(400, 'invalid_request'),
    },
    {
      name: 'answers 400 invalid_request to a repeated grant_type in a POST (RFC 6749 §3.1)',
      options: () => oauthOptions(),
      send: refuseToken(tokenForm([...Object.entries(CLIENT_SECRET_POST), ['grant_type', 'client_credentials']])),
      expect: tokenRefused(400, 'invalid_request'),
    },
    {
      name: 'answers 400 invalid_request to a POST that is not form-urlencoded',
      options: () => oauthOptions(),
      send: refuseToken(post(JSON.stringify(SERVICE_FIELDS), {}, '/token')),
      expect: tokenRefused(400, 'invalid_request'),
    },
    {
      name: 'answers 405 method_not_allowed to a method other than GET and POST',
      options: () => oauthOptions(),
      send: refuseToken({ method: 'PUT', path: tokenPath(OAUTH.appId, OAUTH.secret) }),
      expect: tokenRefused(405, 'method_not_allowed', { allow: 'GET, POST' }),
    },
  ],
}

const LIMIT = 4096
const DEPTH = 8

const bodies: Group = {
  name: 'the body',
  cases: [
    {
      name: "delivers any JSON body in mode 'none'",
      options: () => noneOptions(),
      send: request(post(acme.body)),
      expect: delivered(acme.body),
    },
    {
      name: 'delivers a body of exactly maxBodySize bytes',
      options: () => noneOptions({ maxBodySize: LIMIT }),
      send: request(post(jsonOfSize(LIMIT))),
      expect: delivered(jsonOfSize(LIMIT)),
    },
    {
      name: 'answers 413 payload_too_large for a Content-Length over maxBodySize',
      options: () => noneOptions({ maxBodySize: LIMIT }),
      send: request(post(jsonOfSize(LIMIT + 1))),
      expect: { status: 413, error: 'payload_too_large' },
    },
    {
      name: 'answers 413 payload_too_large for a Content-Length over the default 1 MiB',
      options: () => noneOptions(),
      send: request(post(jsonOfSize(1_048_577))),
      expect: { status: 413, error: 'payload_too_large' },
    },
    {
      name: 'answers 413 payload_too_large for a chunked body that grows past maxBodySize, once it has drained the rest',
      options: () => noneOptions({ maxBodySize: LIMIT }),
      send: request({
        path: '/hooks',
        headers: { 'content-type': 'application/json' },
        stream: Array(1024).fill(new Uint8Array(512).fill(0x20)),
      }),
      expect: { status: 413, error: 'payload_too_large', drained: true },
    },
    {
      name: 'answers 413 payload_too_large for a correctly signed body over maxBodySize',
      options: () => ({ ...secretOptions(SECRET), maxBodySize: 64 }),
      send: request(post(acme.body, { [SIGNATURE]: acme.signature })),
      expect: { status: 413, error: 'payload_too_large' },
    },
    {
      name: 'delivers a chunked body within maxBodySize',
      options: () => noneOptions({ maxBodySize: LIMIT }),
      send: request({ path: '/hooks', headers: { 'content-type': 'application/json' }, stream: chunksOf(acme.body, 16) }),
      expect: delivered(acme.body),
    },
    {
      name: 'delivers a correctly signed chunked body',
      options: () => secretOptions(SECRET),
      send: request({ path: '/hooks', headers: { [SIGNATURE]: acme.signature }, stream: chunksOf(acme.body, 7) }),
      expect: delivered(acme.body),
    },
    {
      name: 'answers 400 invalid_json for a body that is not JSON',
      options: () => noneOptions(),
      send: request(post(NOT_JSON)),
      expect: { status: 400, error: 'invalid_json' },
    },
    {
      name: 'answers 400 invalid_json for an empty body',
      options: () => noneOptions(),
      send: request(post('')),
      expect: { status: 400, error: 'invalid_json' },
    },
    {
      name: 'delivers JSON nested exactly maxDepth deep',
      options: () => noneOptions({ maxDepth: DEPTH }),
      send: request(post(nested(DEPTH))),
      expect: delivered(nested(DEPTH)),
    },
    {
      name: 'answers 400 invalid_json for JSON nested deeper than maxDepth',
      options: () => noneOptions({ maxDepth: DEPTH }),
      send: request(post(nested(DEPTH + 1))),
      expect: { status: 400, error: 'invalid_json' },
    },
    {
      name: 'answers 400 invalid_json for 100 000 nested arrays under the default maxDepth',
      options: () => noneOptions(),
      send: request(post(nested(100_000))),
      expect: { status: 400, error: 'invalid_json' },
    },
    {
      name: 'answers 415 unsupported_encoding for Content-Encoding: gzip',
      options: () => noneOptions(),
      send: request(post(gzipSync(EVENT), { 'content-encoding': 'gzip' })),
      expect: { status: 415, error: 'unsupported_encoding' },
    },
  ],
}

/**
 * A Standard Schema written out by hand, as any validator (Zod, Valibot, ArkType…) implements it,
 * so that the table stays free of a validator the runtime matrix would have to bundle: an event
 * whose `data.id` is a number, handed on with the id as a string (an output that differs from the
 * JSON, as a transforming schema's does).
 */
const eventSchema: StandardSchemaV1<unknown, { event: string; data: { id: string } }> = {
  '~standard': {
    version: 1,
    vendor: 'conformance',
    validate(value) {
      const { event, data } = (value ?? {}) as { event?: unknown; data?: { id?: unknown } }
      const issues = [
        ...(typeof event === 'string' ? [] : [{ message: 'Expected a string', path: ['event'] }]),
        ...(typeof data?.id === 'number'
          ? []
          : [{ message: `Expected a number, received ${JSON.stringify(data?.id)}`, path: ['data', { key: 'id' }] }]),
      ]
      return issues.length > 0 ? { issues } : { value: { event: event as string, data: { id: String(data?.id) } } }
    },
  },
}

const schemas: Group = {
  name: 'the payload schema',
  cases: [
    {
      name: "hands on the schema's output for a verified payload that matches",
      options: () => ({ ...secretOptions(SECRET), schema: eventSchema }),
      send: async (app) => app.send(post(EVENT, { [SIGNATURE]: await sign(EVENT, SECRET) })),
      expect: { status: 200, payload: { event: 'customer.created', data: { id: '884211' } }, raw: EVENT },
    },
    {
      name: 'answers 422 invalid_payload with the failing paths, and never the values, for a verified payload that does not match',
      options: () => ({ ...secretOptions(SECRET), schema: eventSchema }),
      send: async (app) => {
        const body = '{"event":"customer.created","data":{"id":"secret-looking-884211"}}'
        return app.send(post(body, { [SIGNATURE]: await sign(body, SECRET) }))
      },
      expect: { status: 422, error: 'invalid_payload', json: { paths: ['data.id'], message: matching(/^(?!.*secret-looking).*data\.id/) } },
    },
    {
      name: 'authenticates before it validates: a payload that fails both is 401',
      options: () => ({ ...basicOptions(), schema: eventSchema }),
      send: request(post('{"data":{}}', { authorization: basicHeader('hook-user:wrong') })),
      expect: { status: 401, error: 'invalid_credentials', headers: BASIC_CHALLENGE },
    },
  ],
}

const EVENT_PRETTY = JSON.stringify(JSON.parse(EVENT), null, 2)

/** Sends `first`, then `second`, and hands back the answer to the second. */
const twice =
  (first: () => Promise<Outgoing>, second: () => Promise<Outgoing> = first) =>
  async (app: Target) => {
    const reply = await app.send(await first())
    if (reply.status !== 200) throw new Error(`the first delivery was answered ${reply.status}: ${reply.text}`)
    return app.send(await second())
  }
const signedEvent = (body: string) => async () => post(body, { [SIGNATURE]: await sign(EVENT, SECRET) })

const dedupes: Group = {
  name: 'each delivery once (dedupe)',
  cases: [
    {
      name: 'answers a duplicate of a handled delivery 200 without running the handler again',
      options: () => ({ ...secretOptions(SECRET), dedupe: {} }),
      send: twice(signedEvent(EVENT)),
      expect: { status: 200, json: { duplicate: true, fingerprint: matching(/^[0-9a-f]{64}$/) }, handled: 1 },
    },
    {
      name: 'takes a whitespace variant of a handled delivery for the same delivery',
      options: () => ({ ...secretOptions(SECRET), dedupe: {} }),
      send: twice(signedEvent(EVENT), signedEvent(EVENT_PRETTY)),
      expect: { status: 200, json: { duplicate: true }, handled: 1 },
    },
    {
      name: 'runs the handler for a delivery that differs in a value',
      options: () => ({ ...noneOptions(), dedupe: {} }),
      send: twice(
        async () => post(EVENT),
        async () => post(EVENT.replace('884211', '884212')),
      ),
      expect: { ...delivered(EVENT.replace('884211', '884212')), handled: 2 },
    },
    {
      name: 'answers 503 store_unavailable, and never runs the handler, when the store cannot be reached',
      options: () => ({
        ...secretOptions(SECRET),
        dedupe: {
          store: {
            claim: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379')),
          },
        },
      }),
      send: async (app) => app.send(await signedEvent(EVENT)()),
      expect: { status: 503, error: 'store_unavailable', headers: { 'retry-after': '30' } },
    },
  ],
}

export const groups: readonly Group[] = [secretMode, basicMode, oauthMode, tokenEndpoint, bodies, schemas, dedupes]

const LENGTH_LIMIT = 64
const OVER_LENGTH_LIMIT = jsonOfSize(100)

/**
 * Content-Length values that a listening server's own parser refuses before any app runs (Node,
 * Bun and Deno answer 400, workerd's front 500; test/conformance/connections.test.ts and the
 * runtime matrix pin those answers), so these rows run where a fetch `Request` is handed to the
 * app as it is: in process. Bun and Deno do pass on two identical Content-Length lines, joined as
 * `N, N`, which is why a lenient `Number(…)` there skipped the size limit.
 */
export const contentLength: Group = {
  name: 'Content-Length as the sender wrote it',
  cases: [
    {
      name: "answers 400 invalid_body for 'Content-Length: 5, 6' (two lengths that disagree)",
      options: () => noneOptions(),
      send: request(post('{"a":1}', { 'content-length': '5, 6' })),
      expect: { status: 400, error: 'invalid_body' },
    },
    {
      name: "answers 413 payload_too_large for 'Content-Length: 100, 100' over maxBodySize, draining the body rather than keeping it",
      options: () => noneOptions({ maxBodySize: LENGTH_LIMIT }),
      // Streamed, so that a read the declared length should have prevented shows.
      send: request({
        path: '/hooks',
        headers: { 'content-type': 'application/json', 'content-length': '100, 100' },
        stream: chunksOf(OVER_LENGTH_LIMIT, 10),
      }),
      expect: { status: 413, error: 'payload_too_large', drained: true },
    },
    {
      name: "delivers a body whose Content-Length repeats its one length ('N, N', RFC 9110 §8.6)",
      options: () => noneOptions(),
      send: request(post(EVENT, { 'content-length': `${EVENT.length}, ${EVENT.length}` })),
      expect: delivered(EVENT),
    },
    {
      name: "answers 400 invalid_body for a Content-Length with a sign ('+N'), which Number() would take",
      options: () => noneOptions(),
      send: request(post(EVENT, { 'content-length': `+${EVENT.length}` })),
      expect: { status: 400, error: 'invalid_body' },
    },
  ],
}
