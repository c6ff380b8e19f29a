/**
 * Every entry point of `createReceiver` that an unauthenticated request reaches, in each mode and
 * with each body type: what the unit cost test (packages/core/test/verification-cost.test.ts) and
 * the adversarial benchmark's unit part (bench/adversarial.ts) send every repeated unit to. Given a
 * build's `createReceiver`, so that one table serves the Node build and the Web build alike.
 *
 * Portable (no Node APIs, erasable TypeScript only).
 */

/** The request a receiver takes (the core's `IncomingRequest`, the part used here). */
interface IncomingRequest {
  method: string
  url: string
  headers: Record<string, string>
  body: Uint8Array | null
}

/** The core's `Receiver`, the part used here: the testkit does not depend on a build of the core. */
interface Receiver {
  verify(request: IncomingRequest): Promise<{ ok: true } | { ok: false; response: { status: number } }>
  token(request: IncomingRequest): Promise<{ status: number; body: string }>
}

/** A build's `createReceiver`, whichever: any function of options (and a setup) returning a receiver. */
type AnyCreateReceiver = (options: never, setup?: never) => unknown
type CreateReceiver = (options: object, setup?: { role: 'token' }) => Receiver

export interface RefusalEntry {
  id: string
  label: string
  /** Secrets configured: the contract's bound is per configured secret. */
  secrets: number
  /**
   * HMACs of the body a refusal may cost per secret, where not the contract's 8: with
   * `unicodeWhitespace`, whose extra form is a JavaScript pass over the body (docs/security.md).
   */
  hmacsPerSecret?: number
  /** One request for `body`; the answer's status. Anything but a refusal (or mode 'none' handing a JSON body on) is the caller's to report. */
  call(body: Uint8Array): Promise<number>
}

/** The bound docs/security.md states for a refusal with `unicodeWhitespace: true`, per secret. */
export const UNICODE_HMACS_PER_SECRET = 12

const SECRETS = ['refusal-secret-one-4c1e9a', 'refusal-secret-two-9a7f2b']
const BOGUS_SIGNATURE = 'ab'.repeat(32)
const OAUTH = { mode: 'oauth2', appId: 'wx-app-refusal', secret: 'refusal-app-secret-7e31d0c9' } as const
const OTHER_APP_SECRET = 'refusal-other-app-secret-0f9b3e2a'
const JSON_TYPE = { 'content-type': 'application/json' }
const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' }
const BODY_TYPES = [
  ['JSON', JSON_TYPE],
  ['form', FORM_TYPE],
] as const

const encoder = new TextEncoder()
const decoder = new TextDecoder()

const post = (body: Uint8Array, headers: Record<string, string>, url = '/hooks'): IncomingRequest => ({
  method: 'POST',
  url,
  headers,
  body,
})

function btoaText(text: string): string {
  return btoa(String.fromCharCode(...encoder.encode(text)))
}

/**
 * The entry points of one build: each mode with each body type, mode `secret` with one and two
 * secrets and with `unicodeWhitespace`, mode `oauth2` with the token in the query, a Bearer header, a form field (a forged one,
 * last) or absent, and the token address (the body as a GET's query, and as a POST form).
 * `maxBodySize` must exceed the largest body sent, so every request reaches its check.
 */
export async function refusalEntries(createReceiver: AnyCreateReceiver, maxBodySize: number): Promise<RefusalEntry[]> {
  const make = createReceiver as unknown as CreateReceiver
  const receiver = (options: object, role?: 'token') => make(options, role && { role })
  const other = receiver({ auth: { ...OAUTH, secret: OTHER_APP_SECRET } }, 'token')
  const query = new URLSearchParams({ appid: OAUTH.appId, secret: OTHER_APP_SECRET, grant_type: 'client_credentials' })
  const issued = await other.token({ method: 'GET', url: `/token?${query}`, headers: {}, body: null })
  /** A token of the right app and shape, signed with a key derived from another secret: checked in full, then refused. */
  const forged = (JSON.parse(issued.body) as { access_token: string }).access_token
  const secret1 = receiver({ auth: { mode: 'secret', secret: SECRETS[0] as string }, maxBodySize })
  const secret2 = receiver({ auth: { mode: 'secret', secret: SECRETS }, maxBodySize })
  const unicode = receiver({ auth: { mode: 'secret', secret: SECRETS[0] as string, unicodeWhitespace: true }, maxBodySize })
  const basic = receiver({ auth: { mode: 'basic', username: 'refusal-user', password: 'refusal-password-5d2a' }, maxBodySize })
  const oauth2 = receiver({ auth: OAUTH, maxBodySize })
  const none = receiver({ auth: { mode: 'none' }, maxBodySize })
  // The token address keeps its own small limit whatever maxBodySize is.
  const token = receiver({ auth: OAUTH, maxBodySize }, 'token')
  const verify = (target: Receiver, request: (body: Uint8Array) => IncomingRequest) => async (body: Uint8Array) => {
    const result = await target.verify(request(body))
    return result.ok ? 200 : result.response.status
  }
  const entries: RefusalEntry[] = []
  const signed = { 'x-service-hmac-signature': BOGUS_SIGNATURE }
  const basicHeader = { authorization: `Basic ${btoaText('refusal-user:guess')}` }
  const bearer = { authorization: `Bearer ${forged}` }
  for (const [type, headers] of BODY_TYPES) {
    entries.push(
      {
        id: `secret-1 ${type}`,
        label: `\`secret\`, 1 secret, ${type}`,
        secrets: 1,
        call: verify(secret1, (b) => post(b, { ...headers, ...signed })),
      },
      {
        id: `secret-2 ${type}`,
        label: `\`secret\`, 2 secrets, ${type}`,
        secrets: 2,
        call: verify(secret2, (b) => post(b, { ...headers, ...signed })),
      },
      {
        id: `secret-unicode ${type}`,
        label: `\`secret\`, 1 secret, \`unicodeWhitespace\`, ${type}`,
        secrets: 1,
        hmacsPerSecret: UNICODE_HMACS_PER_SECRET,
        call: verify(unicode, (b) => post(b, { ...headers, ...signed })),
      },
      { id: `basic ${type}`, label: `\`basic\`, ${type}`, secrets: 1, call: verify(basic, (b) => post(b, { ...headers, ...basicHeader })) },
      {
        id: `oauth2-query ${type}`,
        label: `\`oauth2\`, token in the query, ${type}`,
        secrets: 1,
        call: verify(oauth2, (b) => post(b, headers, `/hooks?access_token=${forged}`)),
      },
      {
        id: `oauth2-header ${type}`,
        label: `\`oauth2\`, Bearer token, ${type}`,
        secrets: 1,
        call: verify(oauth2, (b) => post(b, { ...headers, ...bearer })),
      },
      { id: `oauth2-absent ${type}`, label: `\`oauth2\`, no token, ${type}`, secrets: 1, call: verify(oauth2, (b) => post(b, headers)) },
      { id: `none ${type}`, label: `\`none\`, ${type}`, secrets: 1, call: verify(none, (b) => post(b, headers)) },
    )
  }
  // The request target a client would send, made once per body: decoding it is the client's work.
  const targets = new WeakMap<Uint8Array, string>()
  const queryOf = (body: Uint8Array) => {
    const made = targets.get(body) ?? `/token?${decoder.decode(body)}`
    targets.set(body, made)
    return made
  }
  const tokenField = encoder.encode(`&access_token=${forged}`)
  entries.push(
    {
      id: 'oauth2-form form',
      label: '`oauth2`, a forged token as the form’s last field',
      secrets: 1,
      call: (body) => {
        const withToken = new Uint8Array(body.length + tokenField.length)
        withToken.set(body)
        withToken.set(tokenField, body.length)
        return verify(oauth2, (b) => post(b, FORM_TYPE))(withToken)
      },
    },
    {
      id: 'token-get',
      label: 'token address, GET with the body as its query',
      secrets: 1,
      call: async (body) => (await token.token({ method: 'GET', url: queryOf(body), headers: {}, body: null })).status,
    },
    {
      id: 'token-post',
      label: 'token address, form POST',
      secrets: 1,
      call: async (body) => (await token.token(post(body, FORM_TYPE, '/token'))).status,
    },
  )
  return entries
}
