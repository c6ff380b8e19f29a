import { describe, expect, it } from 'vitest'
import { ApiError, type Fetch, type StoredToken, type TokenStore } from '../src/index.ts'
import { APP_ID, APP_SECRET, bearers, customerRequests, jsonResponse, START, TOKEN_PATH, tokenRequests, useService } from './harness.ts'

const { clock, start, client } = useService()

describe('the access token', () => {
  describe('token request', () => {
    it('is a POST to {baseUrl}/v2/oauth2/token with Basic base64(appId:appSecret) over UTF-8', async () => {
      const service = await start()
      expect(await client(service).token()).toBe('mock-token-1')
      const [request] = tokenRequests(service)
      expect(request?.method).toBe('POST')
      const [scheme, encoded] = request?.headers.authorization?.split(' ') ?? []
      expect(scheme).toBe('Basic')
      expect(Buffer.from(encoded ?? '', 'base64').toString('utf8')).toBe(`${APP_ID}:${APP_SECRET}`)
    })

    it('sends the form body grant_type=client_credentials as application/x-www-form-urlencoded', async () => {
      const service = await start()
      await client(service).token()
      const [request] = tokenRequests(service)
      expect(request?.headers['content-type']).toBe('application/x-www-form-urlencoded')
      expect(request?.body).toBe('grant_type=client_credentials')
      expect(request?.rawQuery).toBe('')
    })

    it('is not sent when the client is created, only when a token is needed', async () => {
      const service = await start()
      client(service)
      expect(service.requests).toEqual([])
    })
  })

  describe('caching', () => {
    it('reuses the token for later calls without asking again', async () => {
      const service = await start()
      const api = client(service)
      for (let i = 0; i < 3; i++) await api.customers.query({ mobile: '13900139000' })
      expect(tokenRequests(service)).toHaveLength(1)
      expect(bearers(service)).toEqual(['mock-token-1', 'mock-token-1', 'mock-token-1'])
    })

    it('keeps a token per client by default', async () => {
      const service = await start()
      await client(service).token()
      await client(service).token()
      expect(tokenRequests(service)).toHaveLength(2)
    })

    it('does not cache a failed token request: the next call asks again', async () => {
      const service = await start()
      const api = client(service, { appSecret: 'wrong' })
      await expect(api.token()).rejects.toBeInstanceOf(ApiError)
      await expect(api.token()).rejects.toBeInstanceOf(ApiError)
      expect(tokenRequests(service)).toHaveLength(2)
    })
  })

  describe('refresh ahead of expiry (injected clock)', () => {
    it('keeps the token until 300 seconds before it expires by default', async () => {
      const service = await start()
      const api = client(service)
      await api.token()
      clock.at(7200 - 300 - 0.001)
      expect(await api.token()).toBe('mock-token-1')
      clock.at(7200 - 300)
      expect(await api.token()).toBe('mock-token-2')
      expect(tokenRequests(service)).toHaveLength(2)
    })

    it('sends the calls made after a refresh with the new token', async () => {
      const service = await start()
      const api = client(service)
      await api.customers.query({ mobile: '13900139000' })
      clock.at(7000)
      await api.customers.query({ mobile: '13900139000' })
      await api.customers.query({ mobile: '13900139000' })
      expect(bearers(service)).toEqual(['mock-token-1', 'mock-token-2', 'mock-token-2'])
    })

    it('follows refreshAhead in seconds', async () => {
      const service = await start()
      const api = client(service, { refreshAhead: 60 })
      await api.token()
      clock.at(7139)
      expect(await api.token()).toBe('mock-token-1')
      clock.at(7140)
      expect(await api.token()).toBe('mock-token-2')
    })

    it('with refreshAhead 0, uses the token to its last millisecond and never after', async () => {
      const service = await start()
      const api = client(service, { refreshAhead: 0 })
      await api.token()
      clock.at(7199.999)
      expect(await api.token()).toBe('mock-token-1')
      clock.at(7200)
      expect(await api.token()).toBe('mock-token-2')
    })

    it('refreshes a token that lives less than twice refreshAhead at half its life, not on every call', async () => {
      const service = await start({ tokenTtl: 100 })
      const api = client(service)
      await api.token()
      clock.at(49)
      expect(await api.token()).toBe('mock-token-1')
      clock.at(50)
      expect(await api.token()).toBe('mock-token-2')
      expect(await api.token()).toBe('mock-token-2')
    })

    it('keeps serving a token that has not expired yet while the token endpoint fails', async () => {
      const service = await start()
      let tokenEndpointDown = false
      const flaky: Fetch = (url, init) =>
        tokenEndpointDown && url.endsWith(TOKEN_PATH) ? Promise.resolve(jsonResponse(503, { error: 'unavailable' })) : fetch(url, init)
      const api = client(service, { fetch: flaky })
      await api.token()
      tokenEndpointDown = true
      clock.at(7199)
      await api.customers.query({ mobile: '13900139000' })
      expect(bearers(service)).toEqual(['mock-token-1'])
      clock.at(7200)
      await expect(api.customers.query({ mobile: '13900139000' })).rejects.toMatchObject({
        status: 503,
        code: 'unavailable',
        path: TOKEN_PATH,
      })
    })
  })

  describe('single flight', () => {
    it('sends one token request for 100 concurrent first calls', async () => {
      const service = await start()
      const api = client(service)
      const results = await Promise.all(Array.from({ length: 100 }, () => api.customers.query({ mobile: '13900139000' })))
      expect(results).toHaveLength(100)
      expect(tokenRequests(service)).toHaveLength(1)
      expect(customerRequests(service)).toHaveLength(100)
      expect(new Set(bearers(service))).toEqual(new Set(['mock-token-1']))
    })

    it('sends one token request for 100 concurrent calls once the token is due', async () => {
      const service = await start()
      const api = client(service)
      await api.token()
      clock.at(7000)
      await Promise.all(Array.from({ length: 100 }, () => api.customers.query({ mobile: '13900139000' })))
      expect(tokenRequests(service)).toHaveLength(2)
      expect(new Set(bearers(service))).toEqual(new Set(['mock-token-2']))
    })

    it('rejects every waiting call with the one failure, then asks again on the next call', async () => {
      const service = await start()
      const api = client(service, { appSecret: 'wrong' })
      const results = await Promise.allSettled(Array.from({ length: 100 }, () => api.token()))
      expect(results.every((r) => r.status === 'rejected' && r.reason instanceof ApiError && r.reason.code === 'invalid_client')).toBe(true)
      expect(tokenRequests(service)).toHaveLength(1)
      await api.token().catch(() => {})
      expect(tokenRequests(service)).toHaveLength(2)
    })
  })

  describe('expires_in', () => {
    it('accepts it as a string, caching and refreshing as for a number', async () => {
      const service = await start({ expiresInAsString: true })
      const api = client(service)
      await api.customers.query({ mobile: '13900139000' })
      await api.customers.query({ mobile: '13900139000' })
      expect(tokenRequests(service)).toHaveLength(1)
      clock.at(6899)
      expect(await api.token()).toBe('mock-token-1')
      clock.at(6900)
      expect(await api.token()).toBe('mock-token-2')
    })

    it('takes 7200 seconds when the answer leaves it out', async () => {
      const service = await start()
      const store = recordingStore()
      const withoutExpiry: Fetch = async (url, init) => {
        const res = await fetch(url, init)
        if (!url.endsWith(TOKEN_PATH)) return res
        const { access_token } = (await res.json()) as { access_token: string }
        return jsonResponse(200, { access_token })
      }
      await client(service, { fetch: withoutExpiry, tokenStore: store }).token()
      expect(store.saved).toEqual([{ accessToken: 'mock-token-1', expiresAt: START + 7_200_000, issuedAt: START }])
    })

    for (const [label, expiresIn] of [
      ['not a number', 'soon'],
      ['negative', -1],
      ['an object', { seconds: 7200 }],
    ] as const) {
      it(`rejects an answer whose expires_in is ${label} with invalid_token_response, leaving the body out`, async () => {
        const service = await start()
        const odd: Fetch = async (url, init) => {
          const res = await fetch(url, init)
          if (!url.endsWith(TOKEN_PATH)) return res
          const { access_token } = (await res.json()) as { access_token: string }
          return jsonResponse(200, { access_token, expires_in: expiresIn })
        }
        const error = await client(service, { fetch: odd })
          .token()
          .catch((e: unknown) => e)
        expect(error).toBeInstanceOf(ApiError)
        expect(error).toMatchObject({ code: 'invalid_token_response', status: 200, path: TOKEN_PATH, body: undefined })
        expect(String((error as Error).message)).not.toContain('mock-token-1')
      })
    }
  })

  describe('tokenStore', () => {
    it('is handed the token, its expiry and the time it was requested, by the client clock', async () => {
      const service = await start()
      const store = recordingStore()
      await client(service, { tokenStore: store }).token()
      expect(store.saved).toEqual([{ accessToken: 'mock-token-1', expiresAt: START + 7_200_000, issuedAt: START }])
    })

    it('lets two clients (two processes) share one token', async () => {
      const service = await start()
      const store = recordingStore()
      await client(service, { tokenStore: store }).customers.query({ mobile: '13900139000' })
      await client(service, { tokenStore: store }).customers.query({ mobile: '13900139000' })
      expect(tokenRequests(service)).toHaveLength(1)
      expect(bearers(service)).toEqual(['mock-token-1', 'mock-token-1'])
    })

    it('works with an asynchronous store, keeping single flight within the client', async () => {
      const service = await start()
      let kept: StoredToken | undefined
      const store: TokenStore = {
        get: async () => kept,
        set: async (token) => {
          kept = token
        },
      }
      const api = client(service, { tokenStore: store })
      await Promise.all(Array.from({ length: 100 }, () => api.token()))
      expect(await client(service, { tokenStore: store }).token()).toBe('mock-token-1')
      expect(kept?.accessToken).toBe('mock-token-1')
      expect(tokenRequests(service)).toHaveLength(1)
    })

    it('uses a token already in the store without asking for one', async () => {
      const service = await start()
      const seeded = await client(service).token()
      const store = recordingStore({ accessToken: seeded, expiresAt: START + 7_200_000 })
      await client(service, { tokenStore: store }).customers.query({ mobile: '13900139000' })
      expect(tokenRequests(service)).toHaveLength(1)
      expect(bearers(service)).toEqual([seeded])
    })

    it('ignores a stored value that is not a token, and replaces it', async () => {
      const service = await start()
      const store = recordingStore({ accessToken: 42, expiresAt: 'later' } as unknown as StoredToken)
      expect(await client(service, { tokenStore: store }).token()).toBe('mock-token-1')
      expect(store.saved).toHaveLength(1)
    })

    it('after a 401, uses the token another process has stored meanwhile instead of asking for one', async () => {
      const service = await start()
      const store = recordingStore()
      let otherProcessRefreshed = false
      const racing: Fetch = async (url, init) => {
        const res = await fetch(url, init)
        if (res.status === 401 && !otherProcessRefreshed) {
          otherProcessRefreshed = true
          const token = await client(service).token()
          await store.set({ accessToken: token, expiresAt: clock.now + 7_200_000 })
        }
        return res
      }
      const api = client(service, { tokenStore: store, fetch: racing })
      await api.token()
      service.expireTokens()
      await api.customers.query({ mobile: '13900139000' })
      // mock-token-1 by this client, mock-token-2 by the other process; none more.
      expect(tokenRequests(service)).toHaveLength(2)
      expect(bearers(service)).toEqual(['mock-token-1', 'mock-token-2'])
    })
  })
})

function recordingStore(initial?: StoredToken): TokenStore & { saved: StoredToken[] } {
  let kept = initial
  const saved: StoredToken[] = []
  return {
    saved,
    get: () => kept,
    set: (token) => {
      saved.push(token)
      kept = token
    },
  }
}
