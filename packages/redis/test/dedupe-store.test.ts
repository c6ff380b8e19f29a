import type { DedupeStore } from '@hookguard/core'
import { type RedisServer, startRedis } from '@hookguard/testkit/redis-server'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { redisDedupeStore } from '../src/index.ts'
import { type Connected, suiteFlavours, uniquePrefix, urlFor } from './clients.ts'

const FINGERPRINT = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'

let server: RedisServer
beforeAll(async () => {
  server = await startRedis()
})
afterAll(async () => {
  await server?.stop().catch(() => {})
})

async function claimed(store: DedupeStore, key: string, ttlMs: number) {
  const found = await store.claim(key, ttlMs)
  if (found.state !== 'claimed') throw new Error(`expected a claim, found ${found.state}`)
  return found.claim
}

describe.each(suiteFlavours)('redisDedupeStore over $name', (flavour) => {
  const open: Connected[] = []
  const connect = async () => {
    const connected = await flavour.connect(urlFor(flavour, server.url))
    open.push(connected)
    return connected
  }
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()))
  })

  it('claims a fingerprint once: SET prefix+fingerprint NX PX, holding a claim token', async () => {
    const { client, raw } = await connect()
    const prefix = uniquePrefix()
    const store = redisDedupeStore(client, { prefix })
    expect((await store.claim(FINGERPRINT, 30_000)).state).toBe('claimed')
    expect(await raw(['GET', prefix + FINGERPRINT])).toMatch(/^processing:[0-9a-f-]{36}$/)
    const pttl = Number(await raw(['PTTL', prefix + FINGERPRINT]))
    expect(pttl).toBeGreaterThan(29_000)
    expect(pttl).toBeLessThanOrEqual(30_000)
  })

  it('uses hookguard:dedupe: as the default prefix', async () => {
    const { client, raw } = await connect()
    const fingerprint = globalThis.crypto.randomUUID().replaceAll('-', '')
    await redisDedupeStore(client).claim(fingerprint, 5000)
    expect(await raw(['GET', `hookguard:dedupe:${fingerprint}`])).toMatch(/^processing:/)
    await raw(['DEL', `hookguard:dedupe:${fingerprint}`])
  })

  it('answers processing, with the time the claim has left, to a duplicate from another instance', async () => {
    const prefix = uniquePrefix()
    const one = redisDedupeStore((await connect()).client, { prefix })
    const two = redisDedupeStore((await connect()).client, { prefix })
    await claimed(one, FINGERPRINT, 30_000)
    const found = await two.claim(FINGERPRINT, 30_000)
    expect(found.state).toBe('processing')
    expect(found.state === 'processing' && found.retryAfterMs).toBeGreaterThan(29_000)
  })

  it('grants exactly one of many concurrent claims across five instances', async () => {
    const prefix = uniquePrefix()
    const stores = await Promise.all([1, 2, 3, 4, 5].map(async () => redisDedupeStore((await connect()).client, { prefix })))
    const results = await Promise.all(stores.flatMap((store) => Array.from({ length: 10 }, () => store.claim(FINGERPRINT, 30_000))))
    expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1)
    expect(results.filter((r) => r.state === 'processing')).toHaveLength(49)
  })

  it('answers done after complete(), for every instance, and keeps it for the TTL given', async () => {
    const { client, raw } = await connect()
    const prefix = uniquePrefix()
    const store = redisDedupeStore(client, { prefix })
    await (await claimed(store, FINGERPRINT, 1000)).complete(60_000)
    expect(await redisDedupeStore((await connect()).client, { prefix }).claim(FINGERPRINT, 1000)).toEqual({ state: 'done' })
    expect(await raw(['GET', prefix + FINGERPRINT])).toBe('done')
    expect(Number(await raw(['PTTL', prefix + FINGERPRINT]))).toBeGreaterThan(59_000)
  })

  it('lets the fingerprint be claimed again at once after release()', async () => {
    const { client } = await connect()
    const store = redisDedupeStore(client, { prefix: uniquePrefix() })
    await (await claimed(store, FINGERPRINT, 30_000)).release()
    expect((await store.claim(FINGERPRINT, 30_000)).state).toBe('claimed')
  })

  it('lets the claim of a killed holder expire after its TTL', async () => {
    const prefix = uniquePrefix()
    const holder = await connect()
    // Connected first: a cluster client takes a while to connect, which must not eat the claim's TTL.
    const other = redisDedupeStore((await connect()).client, { prefix })
    // The holder claims, then its process dies before completing or releasing (closed after the
    // first look, since closing can take longer than the claim's TTL on a busy machine).
    await claimed(redisDedupeStore(holder.client, { prefix }), FINGERPRINT, 150)
    expect((await other.claim(FINGERPRINT, 150)).state).toBe('processing')
    await holder.close()
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect((await other.claim(FINGERPRINT, 150)).state).toBe('claimed')
  })

  it('never lets a late release() of an expired claim touch a newer claim', async () => {
    const { client, raw } = await connect()
    const prefix = uniquePrefix()
    const store = redisDedupeStore(client, { prefix })
    const late = await claimed(store, FINGERPRINT, 100)
    await new Promise((resolve) => setTimeout(resolve, 150))
    await claimed(store, FINGERPRINT, 30_000)
    await late.release()
    expect((await store.claim(FINGERPRINT, 30_000)).state).toBe('processing')
    expect(await raw(['GET', prefix + FINGERPRINT])).toMatch(/^processing:/)
  })

  it('marks done a late complete() of an expired claim even while a newer claim holds the key, which its release leaves done', async () => {
    const { client } = await connect()
    const store = redisDedupeStore(client, { prefix: uniquePrefix() })
    const late = await claimed(store, FINGERPRINT, 100)
    await new Promise((resolve) => setTimeout(resolve, 150))
    const newer = await claimed(store, FINGERPRINT, 30_000)
    await late.complete(60_000)
    expect(await store.claim(FINGERPRINT, 1000)).toEqual({ state: 'done' })
    await newer.release()
    expect(await store.claim(FINGERPRINT, 1000)).toEqual({ state: 'done' })
  })

  it('still marks done a claim that expired while its handler ran, if no one else claimed since', async () => {
    const { client } = await connect()
    const store = redisDedupeStore(client, { prefix: uniquePrefix() })
    const slow = await claimed(store, FINGERPRINT, 100)
    await new Promise((resolve) => setTimeout(resolve, 150))
    await slow.complete(60_000)
    expect(await store.claim(FINGERPRINT, 1000)).toEqual({ state: 'done' })
  })

  it('refuses a TTL that is not a whole number of milliseconds', async () => {
    const { client } = await connect()
    await expect(redisDedupeStore(client).claim(FINGERPRINT, 0.5)).rejects.toBeInstanceOf(TypeError)
  })
})

describe('redisDedupeStore setup', () => {
  it('refuses something that is not a Redis client, naming both libraries', () => {
    expect(() => redisDedupeStore({} as never)).toThrow(/@hookguard\/redis: .*node-redis.*ioredis/)
  })

  it('refuses an empty prefix and a commandTimeout that is not above 0', () => {
    const client = { sendCommand: async () => null }
    expect(() => redisDedupeStore(client, { prefix: '' })).toThrow(TypeError)
    expect(() => redisDedupeStore(client, { commandTimeout: 0 })).toThrow(TypeError)
  })
})
