import { describe, expect, it } from 'vitest'
import type { Fetch, StoredToken, TokenStore } from '../src/index.ts'
import { memoryTokenStore } from '../src/token-manager.ts'
import { bearers, jsonResponse, START, TOKEN_PATH, tokenRequests, useService } from './harness.ts'

const { clock, start, client } = useService()

const MOBILE = { mobile: '13900139000' }

describe('a token store shared by several clients (processes), with lock and invalidate', () => {
  describe('one refresher', () => {
    it('sends one token request for concurrent first calls from ten clients', async () => {
      const service = await start()
      const store = memoryTokenStore()
      const clients = Array.from({ length: 10 }, () => client(service, { tokenStore: store }))
      const tokens = await Promise.all(clients.flatMap((api) => [api.token(), api.token()]))
      expect(new Set(tokens)).toEqual(new Set(['mock-token-1']))
      expect(tokenRequests(service)).toHaveLength(1)
    })

    it('sends one token request when the shared token falls due, whichever clients notice', async () => {
      const service = await start()
      const store = memoryTokenStore()
      const clients = Array.from({ length: 5 }, () => client(service, { tokenStore: store }))
      await clients[0]?.token()
      clock.at(7000)
      await Promise.all(clients.map((api) => api.customers.query(MOBILE)))
      expect(tokenRequests(service)).toHaveLength(2)
      expect(new Set(bearers(service))).toEqual(new Set(['mock-token-2']))
    })

    it('makes a waiting client use the token the lock holder stores, without asking for one', async () => {
      const service = await start()
      const store = memoryTokenStore()
      const release = await store.lock?.()
      const waiting = client(service, { tokenStore: store }).token()
      await new Promise((resolve) => setTimeout(resolve, 120))
      await store.set({ accessToken: 'from-the-holder', expiresAt: START + 7_200_000, issuedAt: START })
      await release?.()
      expect(await waiting).toBe('from-the-holder')
      expect(tokenRequests(service)).toHaveLength(0)
    })

    it('takes over when the holder crashed: its lock expires and one waiter fetches the token', async () => {
      const service = await start()
      const store = memoryTokenStore({ lockTtl: 200 })
      // Taken and never given back, as by a process killed mid-refresh.
      await store.lock?.()
      const began = Date.now()
      const tokens = await Promise.all([1, 2, 3].map(() => client(service, { tokenStore: store }).token()))
      expect(Date.now() - began).toBeGreaterThanOrEqual(150)
      expect(tokens).toEqual(['mock-token-1', 'mock-token-1', 'mock-token-1'])
      expect(tokenRequests(service)).toHaveLength(1)
    })

    it('lets the next client refresh after the holder’s token request failed', async () => {
      const service = await start()
      const store = memoryTokenStore()
      let failures = 1
      const flaky: Fetch = (url, init) =>
        url.endsWith(TOKEN_PATH) && failures-- > 0 ? Promise.resolve(jsonResponse(503, { error: 'unavailable' })) : fetch(url, init)
      const [first, second] = await Promise.allSettled([
        client(service, { tokenStore: store, fetch: flaky }).token(),
        client(service, { tokenStore: store, fetch: flaky }).token(),
      ])
      expect(first).toMatchObject({ status: 'rejected', reason: { status: 503 } })
      expect(second).toEqual({ status: 'fulfilled', value: 'mock-token-1' })
    })
  })

  describe('a 401', () => {
    it('drops the refused token from the shared store, so no other client sends it again', async () => {
      const service = await start()
      const store = spied(memoryTokenStore())
      const one = client(service, { tokenStore: store })
      const two = client(service, { tokenStore: store })
      await one.customers.query(MOBILE)
      service.expireTokens()
      await one.customers.query(MOBILE)
      expect(store.invalidated).toEqual(['mock-token-1'])
      await two.customers.query(MOBILE)
      expect(bearers(service)).toEqual(['mock-token-1', 'mock-token-1', 'mock-token-2', 'mock-token-2'])
      expect(tokenRequests(service)).toHaveLength(2)
    })

    it('does not drop a newer token another client stored meanwhile, and uses it', async () => {
      const service = await start()
      const store = memoryTokenStore()
      let otherRefreshed = false
      const racing: Fetch = async (url, init) => {
        const res = await fetch(url, init)
        if (res.status === 401 && !otherRefreshed) {
          otherRefreshed = true
          await store.set({ accessToken: await client(service).token(), expiresAt: clock.now + 7_200_000 })
        }
        return res
      }
      const api = client(service, { tokenStore: store, fetch: racing })
      await api.token()
      service.expireTokens()
      await api.customers.query(MOBILE)
      expect(bearers(service)).toEqual(['mock-token-1', 'mock-token-2'])
      expect(tokenRequests(service)).toHaveLength(2)
      expect((await store.get())?.accessToken).toBe('mock-token-2')
    })

    it('makes a client whose own last token was dropped elsewhere fetch from the store again', async () => {
      const service = await start()
      const store = memoryTokenStore()
      const one = client(service, { tokenStore: store })
      const two = client(service, { tokenStore: store })
      await one.token()
      await store.invalidate?.('mock-token-1')
      expect(await two.token()).toBe('mock-token-2')
      expect(await one.token()).toBe('mock-token-2')
    })
  })
})

describe('memoryTokenStore', () => {
  const token: StoredToken = { accessToken: 't-1', expiresAt: START + 1000 }

  it('grants its lock to one holder at a time', async () => {
    const store = memoryTokenStore()
    const release = await store.lock?.()
    expect(release).toBeTypeOf('function')
    expect(await store.lock?.()).toBeUndefined()
    await release?.()
    expect(await store.lock?.()).toBeTypeOf('function')
  })

  it('lets its lock expire after lockTtl', async () => {
    const store = memoryTokenStore({ lockTtl: 30 })
    await store.lock?.()
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(await store.lock?.()).toBeTypeOf('function')
  })

  it('ignores the late release of an expired lock, keeping the newer holder’s', async () => {
    const store = memoryTokenStore({ lockTtl: 30 })
    const late = await store.lock?.()
    await new Promise((resolve) => setTimeout(resolve, 50))
    await store.lock?.()
    await late?.()
    expect(await store.lock?.()).toBeUndefined()
  })

  it('invalidates the stored token only if it is the one named', async () => {
    const store = memoryTokenStore()
    await store.set(token)
    await store.invalidate?.('another')
    expect(await store.get()).toEqual(token)
    await store.invalidate?.('t-1')
    expect(await store.get()).toBeUndefined()
  })
})

function spied(store: TokenStore): TokenStore & { invalidated: string[] } {
  const invalidated: string[] = []
  return {
    ...store,
    invalidated,
    invalidate: async (accessToken) => {
      invalidated.push(accessToken)
      await store.invalidate?.(accessToken)
    },
  }
}
