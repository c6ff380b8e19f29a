import { sign } from '@hookguard/core'
import { refusedOrigin } from '@hookguard/testkit/ports'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { type DeliverOptions, deliver } from '../src/deliver.ts'
import { EmulatorError } from '../src/errors.ts'
import { sampleEvent } from '../src/samples.ts'
import { serialize } from '../src/serialize.ts'
import { closeServers, fixtures, rejection, serviceVectors, startServer, text, vector } from './helpers.ts'

afterEach(closeServers)

const SECRET = 'whsec-demo-7c2e91'
const APP_SECRET = 'app-secret-9f1d'

/** A token address that answers like the service's receivers do, and a message address. */
async function oauthServer(
  tokenAnswer = { status: 200, body: JSON.stringify({ access_token: 'tok-123', expires_in: 7200, token_type: 'Bearer' }) },
) {
  return startServer(({ url }) =>
    url.startsWith('/token') ? { ...tokenAnswer, headers: { 'content-type': 'application/json' } } : { status: 204 },
  )
}

describe('deliver', () => {
  describe("mode 'secret'", () => {
    it.each(serviceVectors.map((v) => [v.name, v] as const))(
      "sends %s byte for byte with the service's signature when the body is given as text",
      async (_name, v) => {
        const server = await startServer()
        await deliver({ url: `${server.url}/hooks`, mode: 'secret', secret: v.secret, payload: v.body })
        const [request] = server.requests
        expect(request?.headers['x-service-hmac-signature']).toBe(v.signature)
        expect(Buffer.from(request?.body ?? []).toString('base64')).toBe(v.bodyBase64)
      },
    )

    it.each(serviceVectors.map((v) => [v.name, v] as const))(
      "sends %s with the service's body and signature when the payload is its parsed value",
      async (_name, v) => {
        const server = await startServer()
        await deliver({ url: `${server.url}/hooks`, mode: 'secret', secret: v.secret, payload: JSON.parse(v.body) })
        const [request] = server.requests
        expect(request?.headers['x-service-hmac-signature']).toBe(v.signature)
        expect(text(request?.body ?? new Uint8Array())).toBe(v.body)
      },
    )

    it('signs a pretty-printed text as the service would the same JSON, and sends it unchanged', async () => {
      const pretty = vector('order-paid/pretty-body')
      const server = await startServer()
      await deliver({ url: server.url, mode: 'secret', secret: pretty.secret, payload: pretty.body })
      expect(server.requests[0]?.headers['x-service-hmac-signature']).toBe(vector('order-paid').signature)
      expect(text(server.requests[0]?.body ?? new Uint8Array())).toBe(pretty.body)
    })

    it('sends a Uint8Array payload as the exact bytes, signed as they are', async () => {
      const v = vector('emoji-and-cjk')
      const server = await startServer()
      await deliver({ url: server.url, mode: 'secret', secret: v.secret, payload: new Uint8Array(Buffer.from(v.bodyBase64, 'base64')) })
      expect(server.requests[0]?.headers['x-service-hmac-signature']).toBe(v.signature)
      expect(Buffer.from(server.requests[0]?.body ?? []).toString('base64')).toBe(v.bodyBase64)
    })

    it('puts the signature in signatureHeader when one is given', async () => {
      const server = await startServer()
      await deliver({ url: server.url, mode: 'secret', secret: SECRET, payload: '{}', signatureHeader: 'X-Signature' })
      expect(server.requests[0]?.headers['x-signature']).toBe(vector('empty-object').signature)
      expect(server.requests[0]?.headers['x-service-hmac-signature']).toBeUndefined()
    })
  })

  describe("mode 'basic'", () => {
    it.each(fixtures.basic.cases.map((c) => [c.username, c] as const))(
      'sends the Authorization header the service builds for %s',
      async (_name, { username, password, header }) => {
        const server = await startServer()
        await deliver({ url: server.url, mode: 'basic', username, password, payload: sampleEvent() })
        expect(server.requests[0]?.headers.authorization).toBe(header)
      },
    )

    it('sends no signature header', async () => {
      const server = await startServer()
      await deliver({ url: server.url, mode: 'basic', username: 'hook-user', password: 'pw', payload: sampleEvent() })
      expect(server.requests[0]?.headers['x-service-hmac-signature']).toBeUndefined()
    })
  })

  describe("mode 'oauth2'", () => {
    it('GETs a token with appid, secret and grant_type=client_credentials, then POSTs with access_token in the query', async () => {
      const server = await oauthServer()
      await deliver({
        url: `${server.url}/hooks`,
        mode: 'oauth2',
        tokenUrl: `${server.url}/token`,
        appId: 'app-1',
        appSecret: APP_SECRET,
        payload: sampleEvent(),
      })
      expect(server.requests.map((r) => r.method)).toEqual(['GET', 'POST'])
      const [tokenRequest, delivery] = server.requests
      const tokenUrl = new URL(tokenRequest?.url ?? '', server.url)
      expect(tokenUrl.pathname).toBe('/token')
      expect(Object.fromEntries(tokenUrl.searchParams)).toEqual({ appid: 'app-1', secret: APP_SECRET, grant_type: 'client_credentials' })
      expect(delivery?.url).toBe('/hooks?access_token=tok-123')
      expect(delivery?.headers.authorization).toBeUndefined()
      expect(text(delivery?.body ?? new Uint8Array())).toBe(vector('customer-created').body)
    })

    it('keeps the query both addresses already have', async () => {
      const server = await oauthServer()
      await deliver({
        url: `${server.url}/hooks?tenant=acme`,
        mode: 'oauth2',
        tokenUrl: `${server.url}/token?region=cn`,
        appId: 'app-1',
        appSecret: APP_SECRET,
        payload: '{}',
      })
      expect(server.requests[0]?.url).toBe(`/token?region=cn&appid=app-1&secret=${APP_SECRET}&grant_type=client_credentials`)
      expect(server.requests[1]?.url).toBe('/hooks?tenant=acme&access_token=tok-123')
    })

    it('fetches a new token before every delivery', async () => {
      const server = await oauthServer()
      const options: DeliverOptions = {
        url: server.url,
        mode: 'oauth2',
        tokenUrl: `${server.url}/token`,
        appId: 'a',
        appSecret: APP_SECRET,
        payload: '{}',
      }
      await deliver(options)
      await deliver(options)
      expect(server.requests.map((r) => r.method)).toEqual(['GET', 'POST', 'GET', 'POST'])
    })

    describe('when the token request fails', () => {
      const attempt = (tokenUrl: string, url: string, appSecret = APP_SECRET) =>
        rejection<EmulatorError>(deliver({ url, mode: 'oauth2', tokenUrl, appId: 'app-1', appSecret, payload: '{}' }))

      it('rejects with token_request_failed, the status and the error code, and makes no delivery', async () => {
        const server = await oauthServer({ status: 401, body: JSON.stringify({ error: 'invalid_client', message: 'no' }) })
        const error = await attempt(`${server.url}/token`, `${server.url}/hooks`)
        expect(error).toBeInstanceOf(EmulatorError)
        expect(error.code).toBe('token_request_failed')
        expect(error.status).toBe(401)
        expect(error.reason).toBe('invalid_client')
        expect(error.message).toBe(`@hookguard/emulator: the token address ${server.url}/token answered 401 (invalid_client)`)
        expect(server.requests.map((r) => r.method)).toEqual(['GET'])
      })

      it('rejects when a 200 answer has no access_token', async () => {
        const server = await oauthServer({ status: 200, body: JSON.stringify({ token: 'x' }) })
        const error = await attempt(`${server.url}/token`, `${server.url}/hooks`)
        expect(error.code).toBe('token_request_failed')
        expect(error.message).toMatch(/answered 200 without an access_token$/)
        expect(server.requests).toHaveLength(1)
      })

      it('rejects when the answer is not JSON', async () => {
        const server = await oauthServer({ status: 200, body: 'access_token=x' })
        expect((await attempt(`${server.url}/token`, server.url)).code).toBe('token_request_failed')
      })

      it('rejects naming the address and the network error when the token address cannot be reached', async () => {
        const url = await refusedOrigin()
        const error = await attempt(`${url}/token`, `${url}/hooks`)
        expect(error.code).toBe('token_request_failed')
        expect(error.status).toBeUndefined()
        expect(error.message).toBe(`@hookguard/emulator: could not reach the token address ${url}/token (ECONNREFUSED)`)
      })

      it('never puts the secret in the message, even when the answer echoes it', async () => {
        const secret = 'plainsecret42'
        const server = await oauthServer({ status: 400, body: JSON.stringify({ error: secret }) })
        const error = await attempt(`${server.url}/token`, server.url, secret)
        expect(error.message).not.toContain(secret)
        expect(error.reason).toBeUndefined()
        expect(error.message).toMatch(/answered 400$/)
        const unreachable = await attempt(`${await refusedOrigin()}/token`, server.url, secret)
        expect(unreachable.message).not.toContain(secret)
      })
    })
  })

  describe("mode 'none'", () => {
    it('sends the body with no credentials at all', async () => {
      const server = await startServer()
      await deliver({ url: server.url, mode: 'none', payload: sampleEvent('link.clicked') })
      const headers = server.requests[0]?.headers ?? {}
      expect(headers.authorization).toBeUndefined()
      expect(headers['x-service-hmac-signature']).toBeUndefined()
      expect(text(server.requests[0]?.body ?? new Uint8Array())).toBe(vector('url-with-query').body)
    })
  })

  describe('in every mode', () => {
    const modes = (url: string): DeliverOptions[] => [
      { url, mode: 'secret', secret: SECRET, payload: sampleEvent() },
      { url, mode: 'basic', username: 'u', password: 'p', payload: sampleEvent() },
      { url, mode: 'oauth2', tokenUrl: `${url}/token`, appId: 'a', appSecret: APP_SECRET, payload: sampleEvent() },
      { url, mode: 'none', payload: sampleEvent() },
    ]

    it('POSTs with Content-Type: application/json; charset=utf-8 and the length of the body', async () => {
      const server = await oauthServer()
      for (const options of modes(server.url)) {
        server.requests.length = 0
        await deliver(options)
        const post = server.requests.find((r) => r.method === 'POST')
        expect(post?.headers['content-type'], options.mode).toBe('application/json; charset=utf-8')
        expect(post?.headers['content-length'], options.mode).toBe(String(Buffer.byteLength(serialize(sampleEvent()))))
      }
    })

    it("resolves the receiver's status, headers and body, whatever the status", async () => {
      const server = await startServer(() => ({ status: 401, headers: { 'x-why': 'nope' }, body: '{"error":"invalid_signature"}' }))
      const answer = await deliver({ url: server.url, mode: 'secret', secret: SECRET, payload: '{}' })
      expect(answer.status).toBe(401)
      expect(answer.headers['x-why']).toBe('nope')
      expect(answer.body).toBe('{"error":"invalid_signature"}')
    })

    it('resolves a redirect rather than following it', async () => {
      const server = await startServer(({ url }) => (url === '/old' ? { status: 308, headers: { location: '/new' } } : { status: 204 }))
      const answer = await deliver({ url: `${server.url}/old`, mode: 'none', payload: '{}' })
      expect(answer.status).toBe(308)
      expect(answer.headers.location).toBe('/new')
      expect(server.requests.map((r) => r.url)).toEqual(['/old'])
    })

    it('rejects with delivery_failed naming the address without its query when the receiver cannot be reached', async () => {
      const url = await refusedOrigin()
      const error = await rejection<EmulatorError>(deliver({ url: `${url}/hooks?k=v`, mode: 'none', payload: '{}' }))
      expect(error).toBeInstanceOf(EmulatorError)
      expect(error.code).toBe('delivery_failed')
      expect(error.message).toBe(`@hookguard/emulator: could not reach ${url}/hooks (ECONNREFUSED)`)
    })

    it('uses the fetch it is given', async () => {
      const fetch = vi.fn(async () => new Response('ok', { status: 202 }))
      const answer = await deliver({ url: 'http://receiver.test/hooks', mode: 'secret', secret: SECRET, payload: '{}', fetch })
      expect(answer).toMatchObject({ status: 202, body: 'ok' })
      const [url, init] = fetch.mock.calls[0] as unknown as [URL, RequestInit]
      expect(String(url)).toBe('http://receiver.test/hooks')
      expect(init.method).toBe('POST')
      expect((init.headers as Record<string, string>)['X-Service-Hmac-Signature']).toBe(await sign('{}', SECRET))
    })
  })

  describe('options, checked before any request', () => {
    const fetch = vi.fn(async () => new Response(null, { status: 204 }))
    const base = { url: 'http://127.0.0.1:9/hooks', payload: '{}', fetch }
    const invalid: [string, unknown][] = [
      ['no options', undefined],
      ['no url', { ...base, url: undefined, mode: 'none' }],
      ['a relative url', { ...base, url: '/hooks', mode: 'none' }],
      ['a url that is not http(s)', { ...base, url: 'ftp://example.com/x', mode: 'none' }],
      ['no mode', { ...base }],
      ['an unknown mode', { ...base, mode: 'hmac' }],
      ['no payload', { ...base, payload: undefined, mode: 'none' }],
      ['a payload with NaN', { ...base, payload: { n: Number.NaN }, mode: 'none' }],
      ['a fetch that is not a function', { ...base, fetch: 'fetch', mode: 'none' }],
      ["mode 'secret' without a secret", { ...base, mode: 'secret' }],
      ["mode 'secret' with an empty secret", { ...base, mode: 'secret', secret: '' }],
      ["mode 'secret' with an empty signatureHeader", { ...base, mode: 'secret', secret: SECRET, signatureHeader: '' }],
      [
        "mode 'secret' with a signatureHeader that is no header name",
        { ...base, mode: 'secret', secret: SECRET, signatureHeader: 'X Sig' },
      ],
      ["mode 'basic' without a username", { ...base, mode: 'basic', password: 'p' }],
      ["mode 'basic' with a colon in the username", { ...base, mode: 'basic', username: 'a:b', password: 'p' }],
      ["mode 'basic' without a password", { ...base, mode: 'basic', username: 'u' }],
      ["mode 'oauth2' without tokenUrl", { ...base, mode: 'oauth2', appId: 'a', appSecret: APP_SECRET }],
      ["mode 'oauth2' with a relative tokenUrl", { ...base, mode: 'oauth2', tokenUrl: '/token', appId: 'a', appSecret: APP_SECRET }],
      ["mode 'oauth2' without appId", { ...base, mode: 'oauth2', tokenUrl: 'http://127.0.0.1:9/token', appSecret: APP_SECRET }],
      ["mode 'oauth2' without appSecret", { ...base, mode: 'oauth2', tokenUrl: 'http://127.0.0.1:9/token', appId: 'a' }],
      [
        "mode 'oauth2' with a payload that cannot be serialised",
        { ...base, mode: 'oauth2', tokenUrl: 'http://127.0.0.1:9/token', appId: 'a', appSecret: APP_SECRET, payload: { id: 1n } },
      ],
    ]

    it.each(invalid)('rejects %s with a TypeError named for the package, and sends nothing', async (_what, options) => {
      fetch.mockClear()
      const error = await rejection(deliver(options as DeliverOptions))
      expect(error).toBeInstanceOf(TypeError)
      expect(error.message).toMatch(/^@hookguard\/emulator: /)
      expect(error.message).not.toContain(APP_SECRET)
      expect(fetch).not.toHaveBeenCalled()
    })
  })
})
