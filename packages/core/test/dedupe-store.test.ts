import { describe, expect, it } from 'vitest'
import { type ClaimResult, type DedupeStore, memoryDedupeStore } from '../src/index.ts'

const KEY = 'a'.repeat(64)

function clocked(options: { maxEntries?: number } = {}) {
  const time = { now: 1_000_000 }
  const store = memoryDedupeStore({ ...options, clock: () => time.now })
  return { time, store }
}

async function claimed(store: DedupeStore, key: string, ttlMs: number) {
  const found = await store.claim(key, ttlMs)
  if (found.state !== 'claimed') throw new Error(`expected a claim, found ${found.state}`)
  return found.claim
}

describe('memoryDedupeStore', () => {
  describe('the first claim of a fingerprint', () => {
    it('is granted', async () => {
      const { store } = clocked()
      expect((await store.claim(KEY, 1000)).state).toBe('claimed')
    })

    it('does not stop another fingerprint from being claimed', async () => {
      const { store } = clocked()
      await claimed(store, KEY, 1000)
      expect((await store.claim('b'.repeat(64), 1000)).state).toBe('claimed')
    })
  })

  describe('a second claim while the first is processing', () => {
    it('finds it processing, with the time left on the claim', async () => {
      const { time, store } = clocked()
      await claimed(store, KEY, 30_000)
      time.now += 10_000
      expect(await store.claim(KEY, 30_000)).toEqual({ state: 'processing', retryAfterMs: 20_000 })
    })

    it('is granted once the first claim has expired (its holder crashed)', async () => {
      const { time, store } = clocked()
      await claimed(store, KEY, 30_000)
      time.now += 29_999
      expect((await store.claim(KEY, 30_000)).state).toBe('processing')
      time.now += 1
      expect((await store.claim(KEY, 30_000)).state).toBe('claimed')
    })

    it('grants exactly one of many concurrent claims', async () => {
      const { store } = clocked()
      const results = await Promise.all(Array.from({ length: 50 }, () => store.claim(KEY, 1000)))
      expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1)
      expect(results.filter((r) => r.state === 'processing')).toHaveLength(49)
    })
  })

  describe('after complete()', () => {
    it('finds the fingerprint done', async () => {
      const { store } = clocked()
      await (await claimed(store, KEY, 1000)).complete()
      expect(await store.claim(KEY, 1000)).toEqual({ state: 'done' })
    })

    it('remembers it for the claim TTL by default, then lets it be claimed again', async () => {
      const { time, store } = clocked()
      const claim = await claimed(store, KEY, 1000)
      time.now += 500
      await claim.complete()
      time.now += 999
      expect((await store.claim(KEY, 1000)).state).toBe('done')
      time.now += 1
      expect((await store.claim(KEY, 1000)).state).toBe('claimed')
    })

    it('remembers it for the TTL complete() is given', async () => {
      const { time, store } = clocked()
      await (await claimed(store, KEY, 1000)).complete(60_000)
      time.now += 59_999
      expect((await store.claim(KEY, 1000)).state).toBe('done')
      time.now += 1
      expect((await store.claim(KEY, 1000)).state).toBe('claimed')
    })

    it('of a claim that expired while its handler ran, still marks the fingerprint done', async () => {
      const { time, store } = clocked()
      const claim = await claimed(store, KEY, 1000)
      time.now += 5000
      await claim.complete()
      expect((await store.claim(KEY, 1000)).state).toBe('done')
    })

    it('of an expired claim marks the fingerprint done even while a newer claim holds it: the delivery was handled', async () => {
      const { time, store } = clocked()
      const late = await claimed(store, KEY, 1000)
      time.now += 1000
      const newer = await claimed(store, KEY, 1000)
      await late.complete()
      expect((await store.claim(KEY, 1000)).state).toBe('done')
      // The newer run failing afterwards does not undo it.
      await newer.release()
      expect((await store.claim(KEY, 1000)).state).toBe('done')
    })
  })

  describe('after release()', () => {
    it('lets the fingerprint be claimed again at once (the service retries a failed delivery)', async () => {
      const { store } = clocked()
      await (await claimed(store, KEY, 30_000)).release()
      expect((await store.claim(KEY, 30_000)).state).toBe('claimed')
    })

    it('of an expired claim never releases a newer claim of the same fingerprint', async () => {
      const { time, store } = clocked()
      const late = await claimed(store, KEY, 1000)
      time.now += 1000
      await claimed(store, KEY, 1000)
      await late.release()
      expect((await store.claim(KEY, 1000)).state).toBe('processing')
    })

    it('of a claim that expired and was then evicted resolves and changes nothing', async () => {
      const { time, store } = clocked({ maxEntries: 1 })
      const first = await claimed(store, KEY, 100)
      time.now += 200
      // The store is full: the expired claim makes room for another fingerprint.
      expect((await store.claim('b'.repeat(64), 60_000)).state).toBe('claimed')
      await expect(first.release()).resolves.toBeUndefined()
      expect((await store.claim('b'.repeat(64), 60_000)).state).toBe('processing')
    })

    it('after complete() leaves the fingerprint done', async () => {
      const { store } = clocked()
      const claim = await claimed(store, KEY, 1000)
      await claim.complete()
      await claim.release()
      expect((await store.claim(KEY, 1000)).state).toBe('done')
    })
  })

  describe('its bound', () => {
    it('keeps at most maxEntries fingerprints, forgetting the least recently written first', async () => {
      const { store } = clocked({ maxEntries: 3 })
      for (const key of ['k1', 'k2', 'k3']) await (await claimed(store, key, 60_000)).complete()
      // k1 was written first, so the fourth fingerprint pushes it out.
      await claimed(store, 'k4', 60_000)
      const states: Record<string, ClaimResult['state']> = {}
      for (const key of ['k2', 'k3', 'k4']) states[key] = (await store.claim(key, 60_000)).state
      expect(states).toEqual({ k2: 'done', k3: 'done', k4: 'processing' })
      expect((await store.claim('k1', 60_000)).state).toBe('claimed')
    })

    it('defaults to 10 000 fingerprints', async () => {
      const { store } = clocked()
      for (let i = 0; i <= 10_000; i++) await (await claimed(store, `k${i}`, 60_000)).complete()
      expect((await store.claim('k1', 60_000)).state).toBe('done')
      expect((await store.claim('k0', 60_000)).state).toBe('claimed')
    })

    it('never drops a claim whose handler still runs: a flood of other deliveries makes room from the handled ones', async () => {
      const { store } = clocked({ maxEntries: 3 })
      await claimed(store, 'running', 60_000)
      for (const key of ['a', 'b', 'c', 'd', 'e']) await (await claimed(store, key, 60_000)).complete()
      expect((await store.claim('running', 60_000)).state).toBe('processing')
    })

    it('refuses a new claim while every entry is a claim being handled, and takes it once one expires', async () => {
      const { time, store } = clocked({ maxEntries: 2 })
      await claimed(store, 'a', 1000)
      await claimed(store, 'b', 60_000)
      await expect(store.claim('c', 60_000)).rejects.toThrow('the in-memory dedupe store holds 2 deliveries being handled, its maxEntries')
      time.now += 1000
      expect((await store.claim('c', 60_000)).state).toBe('claimed')
      expect((await store.claim('b', 60_000)).state).toBe('processing')
    })
  })

  describe('options', () => {
    for (const maxEntries of [0, -1, 1.5, Number.NaN]) {
      it(`refuses maxEntries ${maxEntries} with a TypeError`, () => {
        expect(() => memoryDedupeStore({ maxEntries })).toThrow(
          new TypeError('@hookguard/core: memoryDedupeStore maxEntries must be a whole number, 1 or more'),
        )
      })
    }

    it('takes maxEntries 1 and a claim TTL of 1 ms, the least of each', async () => {
      const { time, store } = clocked({ maxEntries: 1 })
      expect((await store.claim(KEY, 1)).state).toBe('claimed')
      time.now += 1
      expect((await store.claim('b'.repeat(64), 1)).state).toBe('claimed')
    })

    it('refuses a clock that is not a function', () => {
      expect(() => memoryDedupeStore({ clock: 1_700_000_000_000 as never })).toThrow(
        new TypeError('@hookguard/core: memoryDedupeStore clock must be a function'),
      )
    })

    for (const ttl of [0, -1, 1.5, Number.POSITIVE_INFINITY]) {
      it(`refuses a claim TTL of ${ttl} with a TypeError`, async () => {
        await expect(memoryDedupeStore().claim(KEY, ttl)).rejects.toThrow(
          new TypeError('@hookguard/core: a dedupe TTL must be a whole number of milliseconds, 1 or more'),
        )
      })
    }

    it('uses the real clock by default', async () => {
      const store = memoryDedupeStore()
      await claimed(store, KEY, 20)
      await new Promise((resolve) => setTimeout(resolve, 40))
      expect((await store.claim(KEY, 20)).state).toBe('claimed')
    })
  })
})
