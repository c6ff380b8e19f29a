import { describe, expect, it } from 'vitest'
import { ApiError, type Fetch } from '../src/index.ts'
import { bearers, CUSTOMERS_PATH, customerRequests, PLUS_MOBILE, TOKEN_PATH, tokenRequests, useService } from './harness.ts'

const { start, client } = useService()

describe('client.customers.query', () => {
  it('delivers a +86 mobile number to the service with its plus sign', async () => {
    const service = await start()
    const found = await client(service).customers.query({ mobile: PLUS_MOBILE })
    expect(found).toEqual({ total: 1, data: [{ id: 'c-1001', name: 'Li Lei', mobile: PLUS_MOBILE }] })
    const [request] = customerRequests(service)
    expect(request?.rawQuery).toBe('mobile=%2B8613800138000')
    expect(request?.query.mobile).toBe(PLUS_MOBILE)
  })

  it('is a GET to {baseUrl}/v2/customers with Authorization: Bearer <token>', async () => {
    const service = await start()
    await client(service).customers.query({ mobile: '13900139000' })
    const [request] = customerRequests(service)
    expect(request?.method).toBe('GET')
    expect(request?.headers.authorization).toBe('Bearer mock-token-1')
    expect(request?.body).toBe('')
  })

  it('passes other parameters along', async () => {
    const service = await start()
    await client(service).customers.query({ mobile: '13900139000', fields: 'id,name', page: 2 })
    expect(customerRequests(service)[0]?.query).toEqual({ mobile: '13900139000', fields: 'id,name', page: '2' })
  })
})

describe('client.request', () => {
  describe('query encoding', () => {
    it('keeps +, %, =, &, spaces and non-ASCII intact', async () => {
      const service = await start()
      const note = '100% = a&b c+d 李雷'
      await client(service).request('customers', { query: { mobile: '13900139000', note } })
      const [request] = customerRequests(service)
      expect(request?.query.note).toBe(note)
      // A space as %20, not `+`: a `+` on the wire means a plus sign, never a space.
      expect(request?.rawQuery).toBe(`mobile=13900139000&note=${'100%25%20%3D%20a%26b%20c%2Bd%20%E6%9D%8E%E9%9B%B7'}`)
    })

    it('encodes names as well as values', async () => {
      const service = await start()
      await client(service).request('customers', { query: { mobile: '1', 'a+b=c': 'x' } })
      expect(customerRequests(service)[0]?.rawQuery).toBe('mobile=1&a%2Bb%3Dc=x')
    })

    it('repeats the name for an array, and leaves undefined and null out', async () => {
      const service = await start()
      await client(service).request('customers', { query: { tag: ['a', 'b'], skip: undefined, none: null, mobile: '1', vip: true } })
      expect(customerRequests(service)[0]?.rawQuery).toBe('tag=a&tag=b&mobile=1&vip=true')
    })

    it('refuses a query in the path, where it would bypass the encoding', async () => {
      const service = await start()
      await expect(client(service).request('customers?mobile=+86')).rejects.toThrow(/^@hookguard\/client: /)
      expect(service.requests).toEqual([])
    })

    it('refuses a parameter that is an object', async () => {
      const service = await start()
      await expect(client(service).request('customers', { query: { mobile: { n: 1 } as never } })).rejects.toThrow(TypeError)
    })
  })

  describe('addressing', () => {
    it('sends {baseUrl}/v2/{path}, with or without a leading slash', async () => {
      const service = await start()
      const api = client(service)
      await api.request('customers', { query: { mobile: '1' } })
      await api.request('/customers', { query: { mobile: '1' } })
      expect(customerRequests(service)).toHaveLength(2)
    })

    it('accepts a baseUrl with a trailing slash', async () => {
      const service = await start()
      await client(service, { baseUrl: `${service.url}/` }).customers.query({ mobile: '1' })
      expect(service.requests.map((r) => r.path)).toEqual([TOKEN_PATH, CUSTOMERS_PATH])
    })

    it('keeps a path prefix of baseUrl', async () => {
      const service = await start()
      const error = await client(service, { baseUrl: `${service.url}/gateway` })
        .customers.query({ mobile: '1' })
        .catch((e: unknown) => e)
      expect(service.requests.map((r) => r.path)).toEqual(['/gateway/v2/oauth2/token'])
      expect(error).toMatchObject({ status: 404, path: TOKEN_PATH })
    })
  })

  describe('body and headers', () => {
    it('sends a body as JSON and the method in upper case', async () => {
      const service = await start()
      await client(service)
        .request('notes', { method: 'post', body: { text: 'hi', n: 1 } })
        .catch(() => {})
      const [request] = service.requests.filter((r) => r.path === '/v2/notes')
      expect(request).toMatchObject({ method: 'POST', body: '{"text":"hi","n":1}' })
      expect(request?.headers['content-type']).toBe('application/json')
    })

    it("adds the caller's headers but never lets them replace the token", async () => {
      const service = await start()
      await client(service).customers.query({ mobile: '1' }, { headers: { 'x-trace-id': 't-1', Authorization: 'Bearer forged' } })
      const [request] = customerRequests(service)
      expect(request?.headers['x-trace-id']).toBe('t-1')
      expect(request?.headers.authorization).toBe('Bearer mock-token-1')
    })

    it('resolves a 2xx text answer as text and an empty one as undefined', async () => {
      const service = await start()
      const answers = [new Response('plain', { headers: { 'content-type': 'text/plain' } }), new Response(null, { status: 204 })]
      const scripted: Fetch = (url, init) =>
        url.includes(CUSTOMERS_PATH) ? Promise.resolve(answers.shift() as Response) : fetch(url, init)
      const api = client(service, { fetch: scripted })
      expect(await api.request('customers')).toBe('plain')
      expect(await api.request('customers')).toBeUndefined()
    })

    it("rejects with the caller's AbortError when the caller aborts", async () => {
      const service = await start()
      const error = await client(service)
        .customers.query({ mobile: '1' }, { signal: AbortSignal.abort() })
        .catch((e: unknown) => e)
      expect(error).not.toBeInstanceOf(ApiError)
      expect((error as Error).name).toBe('AbortError')
    })
  })

  describe('on a 401', () => {
    it('fetches a new token and retries once, with it', async () => {
      const service = await start()
      const api = client(service)
      await api.token()
      service.expireTokens()
      const found = await api.customers.query({ mobile: PLUS_MOBILE })
      expect(found).toMatchObject({ total: 1 })
      expect(
        service.requests.map((r) => `${r.path} ${r.headers.authorization?.startsWith('Basic') ? 'Basic' : r.headers.authorization}`),
      ).toEqual([
        `${TOKEN_PATH} Basic`,
        `${CUSTOMERS_PATH} Bearer mock-token-1`,
        `${TOKEN_PATH} Basic`,
        `${CUSTOMERS_PATH} Bearer mock-token-2`,
      ])
    })

    it('gives up after the one retry, rejecting with the second 401', async () => {
      // Tokens that expire on issue: every call is refused.
      const service = await start({ tokenTtl: 0 })
      const error = await client(service)
        .customers.query({ mobile: '1' })
        .catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ApiError)
      expect(error).toMatchObject({ status: 401, code: 'invalid_token', path: CUSTOMERS_PATH })
      expect(tokenRequests(service)).toHaveLength(2)
      expect(bearers(service)).toEqual(['mock-token-1', 'mock-token-2'])
    })

    it('shares one new token between 100 concurrent calls that were refused', async () => {
      const service = await start()
      const api = client(service)
      await api.token()
      service.expireTokens()
      await Promise.all(Array.from({ length: 100 }, () => api.customers.query({ mobile: '1' })))
      expect(tokenRequests(service)).toHaveLength(2)
      const sent = bearers(service)
      expect(sent.filter((t) => t === 'mock-token-1')).toHaveLength(100)
      expect(sent.filter((t) => t === 'mock-token-2')).toHaveLength(100)
    })

    it('does not retry a refused token request', async () => {
      const service = await start()
      await client(service, { appSecret: 'wrong' })
        .customers.query({ mobile: '1' })
        .catch(() => {})
      expect(service.requests.map((r) => r.path)).toEqual([TOKEN_PATH])
    })

    it('does not retry other failures', async () => {
      const service = await start()
      await client(service)
        .customers.query({})
        .catch(() => {})
      expect(customerRequests(service)).toHaveLength(1)
    })
  })
})
