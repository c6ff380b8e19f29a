import { createReceiver, type IncomingRequest, TOKEN_MAX_BODY_SIZE, TOKEN_MAX_PARAMETERS, type WebhookOptions } from '@hookguard/core'
import { describe, expect, it, vi } from 'vitest'
import { timingSafeEqual } from '../src/constant-time.ts'

// Every comparison still behaves as it does in production; the spy only counts them.
vi.mock('../src/constant-time.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/constant-time.ts')>()
  return { ...original, timingSafeEqual: vi.fn(original.timingSafeEqual) }
})

const APP_ID = 'wx-app-1042'
const SECRET = 'oauth-secret-4f1d9a'
const OPTIONS: WebhookOptions = { auth: { mode: 'oauth2', appId: APP_ID, secret: SECRET } }
const GRANT = { grant_type: 'client_credentials' }
const SERVICE = { appid: APP_ID, secret: SECRET, ...GRANT }
const POST = { client_id: APP_ID, client_secret: SECRET, ...GRANT }
const CHALLENGE = 'Basic realm="token", charset="UTF-8"'
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

// One receiver of each kind for the whole file: the token key is derived once, on first use.
const tokenAddress = createReceiver(OPTIONS, { role: 'token' })
const receivingAddress = createReceiver(OPTIONS)

type Fields = Record<string, string> | [string, string][]

function get(query: Fields | string, headers: Record<string, string> = {}): IncomingRequest {
  return { method: 'GET', url: `/token?${new URLSearchParams(query)}`, headers, body: new Uint8Array(0) }
}

function post(form: Fields | string, headers: Record<string, string> = {}): IncomingRequest {
  const body = new TextEncoder().encode(new URLSearchParams(form).toString())
  return { method: 'POST', url: '/token', headers: { ...FORM, ...headers }, body }
}

/** application/x-www-form-urlencoded, as the WHATWG URL standard writes it (a space is `+`). */
const formEncode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2)

/** `client_secret_basic` as RFC 6749 §2.3.1 has a client write it. */
const basic = (id: string, secret: string, scheme = 'Basic') => ({
  authorization: `${scheme} ${Buffer.from(`${formEncode(id)}:${formEncode(secret)}`).toString('base64')}`,
})
const rawBasic = (text: string) => ({ authorization: `Basic ${Buffer.from(text).toString('base64')}` })

async function ask(request: IncomingRequest, address = tokenAddress) {
  const answer = await address.token(request)
  return { ...answer, json: JSON.parse(answer.body) as Record<string, unknown> }
}

/** The token the address issued, after checking it is the success answer of RFC 6749 §5.1. */
async function tokenFor(request: IncomingRequest, address = tokenAddress): Promise<string> {
  const answer = await ask(request, address)
  expect(answer.status, answer.body).toBe(200)
  expect(answer.json).toEqual({ access_token: expect.any(String), expires_in: 7200, token_type: 'Bearer' })
  expect(answer.headers).toMatchObject({ 'cache-control': 'no-store', pragma: 'no-cache' })
  return answer.json.access_token as string
}

/** What the service then does with the token: a JSON delivery with `Authorization: Bearer`. */
async function deliverWith(token: string, options = OPTIONS) {
  const body = new TextEncoder().encode('{"event":"customer.created"}')
  return (options === OPTIONS ? receivingAddress : createReceiver(options)).verify({
    method: 'POST',
    url: '/hooks',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  })
}

/** A refusal, checked for what every refusal of the token address must be (RFC 6749 §5.2). */
async function refusal(request: IncomingRequest, address = tokenAddress) {
  const answer = await ask(request, address)
  expect(Object.keys(answer.json).sort()).toEqual(['error', 'error_description', 'message'])
  expect(answer.json.error_description).toBe(answer.json.message)
  expect(answer.headers['cache-control']).toBe('no-store')
  for (const secret of sensitive(request)) expect(answer.body).not.toContain(secret)
  for (const value of Object.values(answer.headers)) {
    for (const secret of sensitive(request)) expect(value).not.toContain(secret)
  }
  return answer
}

/** The secret, the presented client id, the query string and the Authorization value. */
function sensitive(request: IncomingRequest): string[] {
  const url = new URL(request.url as string, 'http://localhost')
  const headers = request.headers as Record<string, string>
  const authorization = headers.authorization ?? ''
  const form = new URLSearchParams(new TextDecoder().decode(request.body as Uint8Array))
  const presented = [url.searchParams, form].flatMap((fields) =>
    ['appid', 'secret', 'client_id', 'client_secret'].map((name) => fields.get(name) ?? ''),
  )
  return [SECRET, APP_ID, url.search.slice(1), authorization.slice(authorization.indexOf(' ') + 1), ...presented].filter(
    (value) => value.length >= 6,
  )
}

describe('the token acquisition address', () => {
  describe("with the service's request", () => {
    it('issues a token for appid and secret in the query of a GET', async () => {
      expect((await deliverWith(await tokenFor(get(SERVICE)))).ok).toBe(true)
    })

    it('issues a token for the same fields in a form-urlencoded POST', async () => {
      expect((await deliverWith(await tokenFor(post(SERVICE)))).ok).toBe(true)
    })
  })

  describe('with client_secret_basic (RFC 6749 §2.3.1)', () => {
    it('issues a token that the receiving address accepts as a Bearer token', async () => {
      const token = await tokenFor(post(GRANT, basic(APP_ID, SECRET)))
      expect((await deliverWith(token)).ok).toBe(true)
    })

    it('reads the scheme name in any case', async () => {
      await tokenFor(post(GRANT, basic(APP_ID, SECRET, 'basic')))
      await tokenFor(post(GRANT, basic(APP_ID, SECRET, 'BASIC')))
    })

    it('accepts the header on a GET too, with grant_type in the query', async () => {
      await tokenFor(get(GRANT, basic(APP_ID, SECRET)))
    })

    it('form-urldecodes each half, so an id or secret may hold a colon, a plus, a percent sign, spaces and any Unicode', async () => {
      const auth = { mode: 'oauth2', appId: 'tenant:7 äpp', secret: 'p+w:rd %41 & ü = 秘密' } as const
      const address = createReceiver({ auth }, { role: 'token' })
      const token = await tokenFor(post(GRANT, basic(auth.appId, auth.secret)), address)
      expect((await deliverWith(token, { auth })).ok).toBe(true)
    })

    it("reads '+' as a space and '%2B' as a plus, as form-urlencoding does", async () => {
      const auth = { mode: 'oauth2', appId: APP_ID, secret: `${SECRET} b+c` } as const
      const address = createReceiver({ auth }, { role: 'token' })
      await tokenFor(post(GRANT, rawBasic(`${APP_ID}:${SECRET}+b%2Bc`)), address)
      expect((await refusal(post(GRANT, rawBasic(`${APP_ID}:${SECRET} b+c`)), address)).json.error).toBe('invalid_client')
    })

    for (const [label, headers] of [
      ['a wrong secret', basic(APP_ID, `${SECRET}-x`)],
      ['a wrong client id', basic('wx-app-2077', SECRET)],
      ['an empty client id and secret', rawBasic(':')],
      ['credentials that are not base64', { authorization: 'Basic %%%not-base64' }],
      ['a scheme with no credentials', { authorization: 'Basic' }],
      ['credentials with no colon', rawBasic(`${APP_ID}${SECRET}`)],
      ['a bad percent-escape in the secret', rawBasic(`${APP_ID}:${SECRET}%zz`)],
      ['a lone percent sign in the client id', rawBasic(`${APP_ID}%:${SECRET}`)],
      ['a percent-escape that is not UTF-8', rawBasic(`${APP_ID}:${SECRET}%C3%28`)],
    ] as const) {
      it(`answers 401 invalid_client with a Basic challenge for ${label}`, async () => {
        const answer = await refusal(post(GRANT, headers))
        expect([answer.status, answer.json.error]).toEqual([401, 'invalid_client'])
        expect(answer.headers['www-authenticate']).toBe(CHALLENGE)
      })
    }
  })

  describe('with client_secret_post (RFC 6749 §2.3.1)', () => {
    it('issues a token for client_id and client_secret in a form-urlencoded POST', async () => {
      expect((await deliverWith(await tokenFor(post(POST)))).ok).toBe(true)
    })

    it("accepts the same fields in the query of a GET, as the service's appid and secret are", async () => {
      await tokenFor(get(POST))
    })

    it('answers 401 invalid_client with a Basic challenge for a wrong secret', async () => {
      const answer = await refusal(post({ ...POST, client_secret: 'guess-guess' }))
      expect([answer.status, answer.json.error, answer.headers['www-authenticate']]).toEqual([401, 'invalid_client', CHALLENGE])
    })

    for (const missing of ['client_id', 'client_secret']) {
      it(`answers 400 invalid_request when ${missing} is missing`, async () => {
        const { [missing]: _, ...rest } = POST as Record<string, string>
        expect((await refusal(post(rest))).json.error).toBe('invalid_request')
      })
    }
  })

  describe('with two client authentication methods at once (RFC 6749 §2.3)', () => {
    for (const [label, request] of [
      ['Basic and client_id/client_secret', post(POST, basic(APP_ID, SECRET))],
      ['Basic and appid/secret', post(SERVICE, basic(APP_ID, SECRET))],
      ['Basic and a lone client_id', post({ client_id: APP_ID, ...GRANT }, basic(APP_ID, SECRET))],
      ['Basic and appid/secret in the query of a GET', get(SERVICE, basic(APP_ID, SECRET))],
      ['malformed Basic and appid/secret', get(SERVICE, { authorization: 'Basic %%%' })],
      ['appid/secret and client_id/client_secret', post({ ...SERVICE, ...POST })],
      ['appid and client_secret', post({ appid: APP_ID, client_secret: SECRET, ...GRANT })],
      ['client_id and secret', get({ client_id: APP_ID, secret: SECRET, ...GRANT })],
    ] as const) {
      it(`answers 400 invalid_request for ${label}, even when each is right`, async () => {
        const answer = await refusal(request)
        expect([answer.status, answer.json.error]).toEqual([400, 'invalid_request'])
      })
    }

    it('treats a field sent without a value as omitted (RFC 6749 §3.1)', async () => {
      await tokenFor(post({ appid: '', secret: '', ...POST }))
    })
  })

  describe('with a repeated parameter (RFC 6749 §3.1)', () => {
    for (const [label, fields] of [
      ['appid', [...Object.entries(SERVICE), ['appid', 'wx-app-2077']]],
      ['the same appid twice', [...Object.entries(SERVICE), ['appid', APP_ID]]],
      ['secret', [...Object.entries(SERVICE), ['secret', SECRET]]],
      ['client_secret', [...Object.entries(POST), ['client_secret', 'another-secret']]],
      ['grant_type', [...Object.entries(SERVICE), ['grant_type', 'client_credentials']]],
      ['a parameter the address does not use', [...Object.entries(POST), ['audience', 'a'], ['audience', 'b']]],
    ] as [string, [string, string][]][]) {
      it(`answers 400 invalid_request for ${label} sent twice, in a GET or a POST`, async () => {
        for (const request of [get(fields), post(fields)]) {
          expect((await refusal(request)).json).toMatchObject({ error: 'invalid_request' })
        }
      })
    }

    it('does not echo the name of a parameter it does not know', async () => {
      const answer = await refusal(post([...Object.entries(POST), ['x-private-name', 'a'], ['x-private-name', 'b']]))
      expect(answer.body).not.toContain('x-private-name')
    })
  })

  describe('with grant_type (RFC 6749 §4.4.2)', () => {
    it('answers 400 invalid_request when it is missing', async () => {
      const { grant_type: _, ...rest } = POST
      expect((await refusal(post(rest, {}))).json.error).toBe('invalid_request')
      expect((await refusal(post({}, basic(APP_ID, SECRET)))).json.error).toBe('invalid_request')
    })

    it('answers 400 unsupported_grant_type for any other value, whichever method authenticates', async () => {
      for (const request of [
        get({ ...SERVICE, grant_type: 'password' }),
        post({ ...POST, grant_type: 'authorization_code' }),
        post({ grant_type: 'refresh_token' }, basic(APP_ID, SECRET)),
      ]) {
        const answer = await refusal(request)
        expect([answer.status, answer.json.error]).toEqual([400, 'unsupported_grant_type'])
      }
    })
  })

  describe('when the client is not who it says', () => {
    for (const [label, request] of [
      ["the service's GET with a wrong secret", get({ ...SERVICE, secret: 'guess-guess' })],
      ["the service's GET with a wrong app id", get({ ...SERVICE, appid: 'wx-app-2077' })],
      ['client_secret_post with a wrong client id', post({ ...POST, client_id: 'wx-app-2077' })],
      ['client_secret_basic with a wrong secret', post(GRANT, basic(APP_ID, 'guess-guess'))],
    ] as const) {
      it(`answers 401 invalid_client with WWW-Authenticate: Basic for ${label} (RFC 7235 §3.1)`, async () => {
        const answer = await refusal(request)
        expect([answer.status, answer.json.error]).toEqual([401, 'invalid_client'])
        expect(answer.headers['www-authenticate']).toBe(CHALLENGE)
      })
    }

    it('compares both the client id and the secret in constant time, even when the id is wrong', async () => {
      for (const request of [
        get({ ...SERVICE, appid: 'wx-app-2077' }),
        post({ ...POST, client_id: 'wx-app-2077' }),
        post(GRANT, basic('wx-app-2077', SECRET)),
      ]) {
        vi.mocked(timingSafeEqual).mockClear()
        expect((await ask(request)).status).toBe(401)
        expect(timingSafeEqual).toHaveBeenCalledTimes(2)
      }
    })

    it('answers a wrong app id exactly as a wrong secret, so that a guess learns nothing of which was wrong', async () => {
      for (const [wrongId, wrongSecret] of [
        [get({ ...SERVICE, appid: 'wx-app-2077' }), get({ ...SERVICE, secret: 'guess-guess' })],
        [post({ ...POST, client_id: 'wx-app-2077' }), post({ ...POST, client_secret: 'guess-guess' })],
        [post(GRANT, basic('wx-app-2077', SECRET)), post(GRANT, basic(APP_ID, 'guess-guess'))],
      ] as const) {
        const [id, secret] = [await refusal(wrongId), await refusal(wrongSecret)]
        expect([id.status, id.headers, id.body]).toEqual([secret.status, secret.headers, secret.body])
      }
    })

    it('answers 400 invalid_request when no client credentials are sent', async () => {
      expect((await refusal(post(GRANT))).json.error).toBe('invalid_request')
      expect((await refusal(get(GRANT, { authorization: 'Bearer not-basic' }))).json.error).toBe('invalid_request')
    })
  })

  describe('in every refusal', () => {
    for (const [label, request] of [
      ['another method', { ...get(SERVICE), method: 'PUT' }],
      ['a POST that is not form-urlencoded', { ...post(SERVICE), headers: { 'content-type': 'application/json' } }],
      ['a missing secret', get({ appid: APP_ID, ...GRANT })],
      ['a wrong secret', get({ ...SERVICE, secret: 'guess-guess' })],
    ] as const) {
      it(`carries error_description beside message, the same text, for ${label} (RFC 6749 §5.2)`, async () => {
        const answer = await refusal(request)
        expect(answer.json.error_description).toEqual(expect.any(String))
        expect((answer.json.error_description as string).length).toBeGreaterThan(0)
      })
    }

    it('carries error_description for a body over its size limit', async () => {
      const answer = await refusal(post({ ...POST, scope: 'x'.repeat(TOKEN_MAX_BODY_SIZE) }))
      expect([answer.status, answer.json.error]).toEqual([413, 'payload_too_large'])
    })
  })

  describe('with a body larger than a token request needs', () => {
    const padded = (size: number) => {
      const fields = new URLSearchParams({ ...POST, scope: '' }).toString()
      return { ...POST, scope: 'x'.repeat(size - fields.length) }
    }

    it(`issues a token for a body of ${TOKEN_MAX_BODY_SIZE} bytes`, async () => {
      expect(new URLSearchParams(padded(TOKEN_MAX_BODY_SIZE)).toString()).toHaveLength(TOKEN_MAX_BODY_SIZE)
      await tokenFor(post(padded(TOKEN_MAX_BODY_SIZE)))
    })

    it(`answers 413 payload_too_large over ${TOKEN_MAX_BODY_SIZE} bytes, whatever maxBodySize is; a body read in full keeps the connection`, async () => {
      for (const address of [tokenAddress, createReceiver({ ...OPTIONS, maxBodySize: 16 * 1024 * 1024 }, { role: 'token' })]) {
        const answer = await refusal(post(padded(TOKEN_MAX_BODY_SIZE + 1)), address)
        expect([answer.status, answer.json.error, answer.headers.connection]).toEqual([413, 'payload_too_large', undefined])
        expect(answer.json.message).toBe(`The request body is larger than the limit of ${TOKEN_MAX_BODY_SIZE} bytes.`)
      }
    })

    it('refuses a declared Content-Length over the limit, handing the reader only the small limit to read by (the rest is discarded)', async () => {
      const read = vi.fn(async () => new Uint8Array(TOKEN_MAX_BODY_SIZE + 1))
      const answer = await ask({
        method: 'POST',
        url: '/token',
        headers: { ...FORM, 'content-length': String(TOKEN_MAX_BODY_SIZE + 1) },
        body: read,
      })
      expect([answer.status, answer.json.error, answer.json.error_description]).toEqual([413, 'payload_too_large', answer.json.message])
      expect(read.mock.calls).toEqual([[TOKEN_MAX_BODY_SIZE, TOKEN_MAX_BODY_SIZE + 1]])
    })

    it('hands a body reader of its own the limit to read by', async () => {
      const read = vi.fn(async () => new TextEncoder().encode(new URLSearchParams(POST).toString()))
      await tokenFor({ method: 'POST', url: '/token', headers: FORM, body: read })
      expect(read).toHaveBeenCalledWith(TOKEN_MAX_BODY_SIZE, undefined)
    })
  })

  describe('with a URL longer than a token request needs', () => {
    it(`answers 400 invalid_request for a URL over ${TOKEN_MAX_BODY_SIZE} characters, before it is parsed`, async () => {
      const request = get({ ...SERVICE, scope: 'x'.repeat(TOKEN_MAX_BODY_SIZE) })
      const answer = await refusal(request)
      expect([answer.status, answer.json.error]).toEqual([400, 'invalid_request'])
      expect(answer.json.message).toBe(`A token request's URL is at most ${TOKEN_MAX_BODY_SIZE} characters long.`)
      const padding = 'x'.repeat(TOKEN_MAX_BODY_SIZE - get({ ...SERVICE, scope: '' }).url.length)
      await tokenFor(get({ ...SERVICE, scope: padding }))
    })
  })

  describe('with more parameters than a token request has', () => {
    const extra = (count: number): [string, string][] => Array.from({ length: count }, (_, i) => [`x${i}`, String(i)])

    it(`issues a token for ${TOKEN_MAX_PARAMETERS} parameters, in a GET or a POST`, async () => {
      const fields = [...Object.entries(POST), ...extra(TOKEN_MAX_PARAMETERS - 3)]
      await tokenFor(get(fields))
      await tokenFor(post(fields))
    })

    it(`answers 400 invalid_request for more than ${TOKEN_MAX_PARAMETERS}, empty ones counted, before parsing them`, async () => {
      const fields = [...Object.entries(POST), ...extra(TOKEN_MAX_PARAMETERS - 3)]
      for (const request of [
        get([...fields, ['x', 'y']]),
        post([...fields, ['x', 'y']]),
        { ...post(fields), body: new TextEncoder().encode(`${new URLSearchParams(fields)}&`) },
      ]) {
        const answer = await refusal(request)
        expect([answer.status, answer.json.error]).toEqual([400, 'invalid_request'])
        expect(answer.json.message).toBe(`A token request has at most ${TOKEN_MAX_PARAMETERS} parameters.`)
      }
    })
  })
})
