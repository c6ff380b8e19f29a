import { type Client, createClient } from '@hookguard/client'
import { type MockService, mockService } from '@hookguard/emulator'
import { type RedisServer, startRedis } from '@hookguard/testkit/redis-server'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { redisTokenStore } from '../src/index.ts'
import { type Connected, suiteFlavours, uniquePrefix, urlFor } from './clients.ts'

const APP_ID = 'app-7'
const APP_SECRET = 'redis-shared-secret'
const TOKEN_PATH = '/v2/oauth2/token'
const MOBILE = { mobile: '13900139000' }

let server: RedisServer
beforeAll(async () => {
  server = await startRedis()
})
afterAll(async () => {
  await server?.stop().catch(() => {})
})

describe.each(suiteFlavours)('redisTokenStore over $name', (flavour) => {
  const open: Connected[] = []
  const services: MockService[] = []
  // One clock for the service and every instance: tests move time, nothing sleeps for expiry.
  const time = { now: Date.now() }
  afterEach(async () => {
    await Promise.all([...open.splice(0).map((c) => c.close()), ...services.splice(0).map((s) => s.close())])
    time.now = Date.now()
  })

  const connect = async () => {
    const connected = await flavour.connect(urlFor(flavour, server.url))
    open.push(connected)
    return connected
  }
  const service = async () => {
    const started = await mockService({ appId: APP_ID, appSecret: APP_SECRET, clock: () => time.now })
    services.push(started)
    return started
  }
  /** One instance of the app: its own Redis connection, the shared key. */
  const instance = async (api: MockService, key: string, lockTtl?: number): Promise<Client> => {
    const { client } = await connect()
    return createClient({
      baseUrl: api.url,
      appId: APP_ID,
      appSecret: APP_SECRET,
      clock: () => time.now,
      tokenStore: redisTokenStore(client, { key, ...(lockTtl === undefined ? {} : { lockTtl }) }),
    })
  }
  const tokenRequests = (api: MockService) => api.requests.filter((r) => r.path === TOKEN_PATH).length
  const bearers = (api: MockService) =>
    api.requests.filter((r) => r.path !== TOKEN_PATH).map((r) => r.headers.authorization?.replace(/^Bearer /, ''))

  it('keeps the token as JSON under its key, expiring with the token', async () => {
    const { client, raw } = await connect()
    const key = `${uniquePrefix()}token`
    const store = redisTokenStore(client, { key })
    const token = { accessToken: 'tok-1', expiresAt: Date.now() + 60_000, issuedAt: Date.now() }
    await store.set(token)
    expect(JSON.parse(String(await raw(['GET', key])))).toEqual(token)
    expect(Number(await raw(['PTTL', key]))).toBeGreaterThan(58_000)
    expect(await store.get()).toEqual(token)
  })

  it('gives five instances one token: one token request for their concurrent first calls', async () => {
    const api = await service()
    const key = `${uniquePrefix()}token`
    const instances = await Promise.all([1, 2, 3, 4, 5].map(() => instance(api, key)))
    const tokens = await Promise.all(instances.flatMap((app) => [app.token(), app.token(), app.token()]))
    expect(new Set(tokens)).toEqual(new Set(['mock-token-1']))
    expect(tokenRequests(api)).toBe(1)
  })

  it('has one instance refresh the token when it falls due, and the others use the new one', async () => {
    const api = await service()
    const key = `${uniquePrefix()}token`
    const instances = await Promise.all([1, 2, 3].map(() => instance(api, key)))
    await instances[0]?.token()
    time.now += 7000 * 1000
    await Promise.all(instances.map((app) => app.customers.query(MOBILE)))
    expect(tokenRequests(api)).toBe(2)
    expect(new Set(bearers(api))).toEqual(new Set(['mock-token-2']))
  })

  it('lets the others take over when the refreshing instance was killed holding the lock', async () => {
    const api = await service()
    const key = `${uniquePrefix()}token`
    const { client } = await connect()
    // Connected first: a cluster client takes a while to connect, which must not eat the lock's TTL.
    const instances = await Promise.all([1, 2, 3].map(() => instance(api, key, 300)))
    // The killed instance: it took the lock and will never give it back.
    await redisTokenStore(client, { key, lockTtl: 300 }).lock?.()
    const began = Date.now()
    const tokens = await Promise.all(instances.map((app) => app.token()))
    expect(Date.now() - began).toBeGreaterThanOrEqual(200)
    expect(tokens).toEqual(['mock-token-1', 'mock-token-1', 'mock-token-1'])
    expect(tokenRequests(api)).toBe(1)
  })

  it('drops a token the service refused (401) for every instance, and one instance fetches the next', async () => {
    const api = await service()
    const key = `${uniquePrefix()}token`
    const [one, two] = await Promise.all([instance(api, key), instance(api, key)])
    await one?.customers.query(MOBILE)
    await two?.customers.query(MOBILE)
    api.expireTokens()
    await one?.customers.query(MOBILE)
    await two?.customers.query(MOBILE)
    // The second instance never sends the refused token again: it finds the new one in Redis.
    expect(bearers(api)).toEqual(['mock-token-1', 'mock-token-1', 'mock-token-1', 'mock-token-2', 'mock-token-2'])
    expect(tokenRequests(api)).toBe(2)
  })

  it('invalidates only the token named, keeping a newer one another instance stored', async () => {
    const { client } = await connect()
    const store = redisTokenStore(client, { key: `${uniquePrefix()}token` })
    const newer = { accessToken: 'newer', expiresAt: Date.now() + 60_000 }
    await store.set(newer)
    await store.invalidate?.('refused')
    expect(await store.get()).toEqual(newer)
    await store.invalidate?.('newer')
    expect(await store.get()).toBeUndefined()
  })

  it('treats a value that is not JSON as no token, and an unreadable one survives invalidate', async () => {
    const { client, raw } = await connect()
    const key = `${uniquePrefix()}token`
    await raw(['SET', key, 'not json'])
    const store = redisTokenStore(client, { key })
    expect(await store.get()).toBeUndefined()
    await store.invalidate?.('not json')
    expect(await raw(['GET', key])).toBe('not json')
  })

  it('grants the lock to one instance at a time, and a late release never frees a newer holder’s', async () => {
    const key = `${uniquePrefix()}token`
    const { client, raw } = await connect()
    // A TTL no pause of a loaded machine outlasts between two calls (100 ms once did, and the
    // second instance took a lock still meant to be held); its expiry is then brought forward.
    const one = redisTokenStore(client, { key, lockTtl: 60_000 })
    const two = redisTokenStore((await connect()).client, { key, lockTtl: 60_000 })
    const late = await one.lock?.()
    expect(late).toBeTypeOf('function')
    expect(await two.lock?.()).toBeUndefined()
    // The holder stalls past its TTL: Redis expires the lock (documented as `key + ':lock'`), as at lockTtl.
    await raw(['PEXPIRE', `${key}:lock`, '1'])
    while (Number(await raw(['EXISTS', `${key}:lock`])) !== 0) await new Promise((resolve) => setTimeout(resolve, 5))
    const newer = await two.lock?.()
    expect(newer).toBeTypeOf('function')
    await late?.()
    expect(await one.lock?.()).toBeUndefined()
    await newer?.()
    expect(await one.lock?.()).toBeTypeOf('function')
  })
})

describe('redisTokenStore when a lock’s answer is lost and the client sends it again', () => {
  it('holds the lock its first SET took', async () => {
    const connected = await suiteFlavours[0]?.connect(server.url)
    if (connected === undefined) throw new Error('no client flavour')
    try {
      // As ioredis does by default when the connection drops after Redis ran a command and before
      // its answer arrived: on reconnecting it sends the command again, and that SET NX finds the
      // lock its first send took. Before, the lock read as another instance's until lockTtl.
      let sets = 0
      const client = {
        isReady: true,
        async sendCommand(args: string[]) {
          if (args[0] === 'SET' && sets++ === 0) await connected.raw(args)
          return connected.raw(args)
        },
      }
      const key = `${uniquePrefix()}token`
      const unlock = await redisTokenStore(client, { key, lockTtl: 30_000 }).lock?.()
      expect(unlock).toBeTypeOf('function')
      expect(await redisTokenStore(connected.client, { key, lockTtl: 30_000 }).lock?.()).toBeUndefined()
      await unlock?.()
      expect(await connected.raw(['GET', `${key}:lock`])).toBeNull()
    } finally {
      await connected.close()
    }
  })
})

describe('redisTokenStore setup', () => {
  const client = { sendCommand: async () => null }

  it('refuses an empty key and a lockTtl that is not a whole number above 0', () => {
    expect(() => redisTokenStore(client, { key: '' })).toThrow(TypeError)
    expect(() => redisTokenStore(client, { lockTtl: 0 })).toThrow(TypeError)
    expect(() => redisTokenStore(client, { lockTtl: 1.5 })).toThrow(TypeError)
  })
})
