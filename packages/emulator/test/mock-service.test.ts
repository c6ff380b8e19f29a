import { request as httpRequest } from 'node:http'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type MockService, type MockServiceOptions, mockService } from '../src/mock-service.ts'

const APP_ID = 'app-42'
const APP_SECRET = 'sëcret:with:colons'
const START = Date.parse('2030-01-01T00:00:00Z')
const PLUS_MOBILE = '+8613800138000'

let now = START
let service: MockService

async function start(options: Partial<MockServiceOptions> = {}): Promise<MockService> {
  service = await mockService({ appId: APP_ID, appSecret: APP_SECRET, clock: () => now, ...options })
  return service
}

function basic(username: string, password: string): string {
  const bytes = new TextEncoder().encode(`${username}:${password}`)
  return `Basic ${btoa(String.fromCharCode(...bytes))}`
}

function postToken(init: { authorization?: string; contentType?: string; body?: string } = {}): Promise<Response> {
  const {
    authorization = basic(APP_ID, APP_SECRET),
    contentType = 'application/x-www-form-urlencoded',
    body = 'grant_type=client_credentials',
  } = init
  const headers: Record<string, string> = { 'content-type': contentType }
  if (authorization) headers.authorization = authorization
  return fetch(`${service.url}/v2/oauth2/token`, { method: 'POST', headers, body })
}

async function issueToken(): Promise<string> {
  const res = await postToken()
  expect(res.status).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}

function getCustomers(rawQuery: string, token?: string): Promise<Response> {
  return fetch(`${service.url}/v2/customers?${rawQuery}`, { headers: token ? { authorization: `Bearer ${token}` } : {} })
}

beforeEach(() => {
  now = START
})

afterEach(async () => {
  await service?.close()
})

describe('mockService', () => {
  it('listens on an ephemeral port of 127.0.0.1', async () => {
    await start()
    expect(service.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(Number(new URL(service.url).port)).toBeGreaterThan(0)
  })

  it('refuses options without credentials, naming the package', async () => {
    await expect(mockService({ appId: '', appSecret: 's' })).rejects.toThrow(/^@hookguard\/emulator: /)
    await expect(mockService({ appId: 'a', appSecret: '' })).rejects.toThrow(TypeError)
  })

  describe('POST /v2/oauth2/token', () => {
    describe('with the right Basic credentials and grant_type=client_credentials', () => {
      it('answers an access token that lives 7200 seconds, not to be cached', async () => {
        await start()
        const res = await postToken()
        expect(res.status).toBe(200)
        expect(res.headers.get('cache-control')).toBe('no-store')
        expect(await res.json()).toEqual({ access_token: 'mock-token-1', expires_in: 7200 })
      })

      it('numbers its tokens in the order it issues them, so tests are reproducible', async () => {
        await start()
        expect([await issueToken(), await issueToken(), await issueToken()]).toEqual(['mock-token-1', 'mock-token-2', 'mock-token-3'])
      })

      it('sends expires_in as a string with expiresInAsString', async () => {
        await start({ expiresInAsString: true })
        expect(await (await postToken()).json()).toEqual({ access_token: 'mock-token-1', expires_in: '7200' })
      })

      it('follows tokenTtl', async () => {
        await start({ tokenTtl: 60 })
        expect(await (await postToken()).json()).toMatchObject({ expires_in: 60 })
      })

      it('accepts a charset on the form content type', async () => {
        await start()
        expect((await postToken({ contentType: 'application/x-www-form-urlencoded; charset=UTF-8' })).status).toBe(200)
      })
    })

    describe('with credentials that do not match', () => {
      for (const [label, authorization] of [
        ['a wrong secret', basic(APP_ID, 'wrong')],
        ['a wrong app id', basic('app-43', APP_SECRET)],
        ['the secret one character short', basic(APP_ID, APP_SECRET.slice(0, -1))],
        ['malformed Basic credentials', 'Basic !!!'],
        ['another scheme', 'Bearer mock-token-1'],
      ] as const) {
        it(`answers 401 invalid_client for ${label}, with a Basic challenge`, async () => {
          await start()
          const res = await postToken({ authorization })
          expect(res.status).toBe(401)
          expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm="/)
          expect(await res.json()).toMatchObject({ error: 'invalid_client' })
        })
      }

      it('answers 401 invalid_client when no Authorization header is sent', async () => {
        await start()
        const res = await postToken({ authorization: '' })
        expect(res.status).toBe(401)
        expect(await res.json()).toMatchObject({ error: 'invalid_client' })
      })

      it('never issues a token for them', async () => {
        await start()
        await postToken({ authorization: basic(APP_ID, 'wrong') })
        expect(await issueToken()).toBe('mock-token-1')
      })

      it('does not echo the presented secret', async () => {
        await start()
        const text = await (await postToken({ authorization: basic(APP_ID, 'guessed-secret') })).text()
        expect(text).not.toContain('guessed-secret')
        expect(text).not.toContain(APP_SECRET)
      })
    })

    describe('with a malformed request', () => {
      it('answers 400 invalid_request for a JSON body', async () => {
        await start()
        const res = await postToken({ contentType: 'application/json', body: '{"grant_type":"client_credentials"}' })
        expect(res.status).toBe(400)
        expect(await res.json()).toMatchObject({ error: 'invalid_request' })
      })

      it('answers 400 invalid_request without grant_type', async () => {
        await start()
        const res = await postToken({ body: 'scope=all' })
        expect(res.status).toBe(400)
        expect(await res.json()).toMatchObject({ error: 'invalid_request' })
      })

      it('answers 400 unsupported_grant_type for another grant', async () => {
        await start()
        const res = await postToken({ body: 'grant_type=password' })
        expect(res.status).toBe(400)
        expect(await res.json()).toMatchObject({ error: 'unsupported_grant_type' })
      })

      it('answers 405 to a GET, naming POST', async () => {
        await start()
        const res = await fetch(`${service.url}/v2/oauth2/token?grant_type=client_credentials`)
        expect(res.status).toBe(405)
        expect(res.headers.get('allow')).toBe('POST')
      })
    })
  })

  describe('GET /v2/customers', () => {
    describe('with a valid Bearer token', () => {
      it('finds the customer whose mobile matches the decoded parameter', async () => {
        await start()
        const res = await getCustomers(`mobile=${encodeURIComponent(PLUS_MOBILE)}`, await issueToken())
        expect(res.status).toBe(200)
        expect(await res.json()).toEqual({ total: 1, data: [{ id: 'c-1001', name: 'Li Lei', mobile: PLUS_MOBILE }] })
      })

      it('finds no one when the plus sign arrives unencoded, since it decodes to a space', async () => {
        await start()
        const res = await getCustomers(`mobile=${PLUS_MOBILE}`, await issueToken())
        expect(await res.json()).toEqual({ total: 0, data: [] })
        expect(service.requests.at(-1)?.query.mobile).toBe(` ${PLUS_MOBILE.slice(1)}`)
      })

      it('searches the seeded customers instead of the default ones', async () => {
        await start({ customers: [{ mobile: '+15550100', vip: true }] })
        const token = await issueToken()
        expect(await (await getCustomers('mobile=%2B15550100', token)).json()).toEqual({
          total: 1,
          data: [{ mobile: '+15550100', vip: true }],
        })
        expect(await (await getCustomers(`mobile=${encodeURIComponent(PLUS_MOBILE)}`, token)).json()).toEqual({ total: 0, data: [] })
      })

      it('accepts the Bearer scheme in any case (RFC 7235 §2.1)', async () => {
        await start()
        const token = await issueToken()
        const res = await fetch(`${service.url}/v2/customers?mobile=13900139000`, { headers: { authorization: `bearer ${token}` } })
        expect(res.status).toBe(200)
      })

      it('answers 400 invalid_request without a mobile parameter', async () => {
        await start()
        const res = await getCustomers('', await issueToken())
        expect(res.status).toBe(400)
        expect(await res.json()).toMatchObject({ error: 'invalid_request' })
      })
    })

    describe('without a usable token', () => {
      it('answers 401 missing_token with a Bearer challenge when none is sent', async () => {
        await start()
        const res = await getCustomers('mobile=13900139000')
        expect(res.status).toBe(401)
        expect(res.headers.get('www-authenticate')).toBe('Bearer')
        expect(await res.json()).toMatchObject({ error: 'missing_token' })
      })

      it('answers 401 invalid_token for a token it never issued', async () => {
        await start()
        const res = await getCustomers('mobile=13900139000', 'mock-token-99')
        expect(res.status).toBe(401)
        expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"')
        expect(await res.json()).toMatchObject({ error: 'invalid_token' })
      })

      it('accepts a token until its last millisecond and refuses it from its expiry on, by the injected clock', async () => {
        await start({ tokenTtl: 60 })
        const token = await issueToken()
        now = START + 59_999
        expect((await getCustomers('mobile=13900139000', token)).status).toBe(200)
        now = START + 60_000
        const res = await getCustomers('mobile=13900139000', token)
        expect(res.status).toBe(401)
        expect(await res.json()).toMatchObject({ error: 'invalid_token' })
      })

      it('refuses every token issued before expireTokens(), and accepts the next one', async () => {
        await start()
        const before = await issueToken()
        service.expireTokens()
        expect((await getCustomers('mobile=13900139000', before)).status).toBe(401)
        const after = await issueToken()
        expect(after).toBe('mock-token-2')
        expect((await getCustomers('mobile=13900139000', after)).status).toBe(200)
      })
    })

    it('answers 405 to a POST', async () => {
      await start()
      const res = await fetch(`${service.url}/v2/customers`, { method: 'POST', headers: { authorization: `Bearer ${await issueToken()}` } })
      expect(res.status).toBe(405)
    })
  })

  it('answers 404 not_found for any other path', async () => {
    await start()
    const res = await fetch(`${service.url}/v2/orders`)
    expect(res.status).toBe(404)
    expect(await res.json()).toMatchObject({ error: 'not_found' })
  })

  describe('requests', () => {
    it('records method, path, raw and decoded query, headers and body of each request, in order', async () => {
      await start()
      const token = await issueToken()
      await getCustomers('mobile=%2B8613800138000&note=100%25%20%3D%20a%26b', token)
      expect(service.requests).toHaveLength(2)
      const [tokenRequest, customersRequest] = service.requests
      expect(tokenRequest).toMatchObject({
        method: 'POST',
        path: '/v2/oauth2/token',
        rawQuery: '',
        query: {},
        body: 'grant_type=client_credentials',
      })
      expect(tokenRequest?.headers['content-type']).toBe('application/x-www-form-urlencoded')
      expect(tokenRequest?.headers.authorization).toBe(basic(APP_ID, APP_SECRET))
      expect(customersRequest).toMatchObject({
        method: 'GET',
        path: '/v2/customers',
        rawQuery: 'mobile=%2B8613800138000&note=100%25%20%3D%20a%26b',
        query: { mobile: PLUS_MOBILE, note: '100% = a&b' },
        body: '',
      })
      expect(customersRequest?.headers.authorization).toBe('Bearer mock-token-1')
    })

    it('records requests it refuses too', async () => {
      await start()
      await getCustomers('mobile=1')
      await fetch(`${service.url}/elsewhere`)
      expect(service.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v2/customers', 'GET /elsewhere'])
    })

    it('keeps a path that starts with two slashes as a path', async () => {
      await start()
      const { port } = new URL(service.url)
      await new Promise<void>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: '//v2/customers?x=1' }, (res) => {
          res.resume()
          res.on('end', resolve)
        })
        req.on('error', reject)
        req.end()
      })
      expect(service.requests[0]).toMatchObject({ path: '//v2/customers', rawQuery: 'x=1' })
    })
  })

  describe('close()', () => {
    it('resolves while a client is still sending a body, and the port stops answering', async () => {
      await start()
      const { port } = new URL(service.url)
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v2/oauth2/token',
        // The server's 100 Continue proves it holds the request open before close() is called.
        headers: { expect: '100-continue', 'content-length': '100' },
      })
      const dropped = new Promise<void>((resolve) => req.on('error', () => resolve()))
      await new Promise<void>((resolve) => req.on('continue', resolve))
      req.write('grant_type')
      await service.close()
      await dropped
      await expect(fetch(`${service.url}/v2/oauth2/token`, { method: 'POST' })).rejects.toThrow()
    })

    it('can be called twice', async () => {
      await start()
      await service.close()
      await expect(service.close()).resolves.toBeUndefined()
    })
  })
})
