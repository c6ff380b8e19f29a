import { createReceiver, type DedupeStore, sign } from '@hookguard/core'
import { describe, expect, it, vi } from 'vitest'
import { shardName, shardOf } from '../src/shard.ts'
import { DEFAULT_SHARDS, durableObjectDedupeStore } from '../src/store.ts'
import { fakeNamespace, resetError } from './fake-namespace.ts'

const KEY = `${'c'.repeat(32)}:${'9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'}`
const OBJECT = shardName(shardOf(KEY, DEFAULT_SHARDS))

async function claimed(store: DedupeStore, key: string, ttlMs: number) {
  const found = await store.claim(key, ttlMs)
  if (found.state !== 'claimed') throw new Error(`expected a claim, found ${found.state}`)
  return found.claim
}

describe('durableObjectDedupeStore', () => {
  describe('its calls', () => {
    it('claims in the key’s object, and completes there, for the TTL given', async () => {
      const fake = fakeNamespace()
      const store = durableObjectDedupeStore(fake.namespace)
      await (await claimed(store, KEY, 30_000)).complete(60_000)
      expect(fake.calls).toEqual([
        { name: OBJECT, method: 'claim' },
        { name: OBJECT, method: 'complete' },
      ])
      expect(fake.objects.get(OBJECT)?.get(KEY)?.token).toBeNull()
      expect(await store.claim(KEY, 30_000)).toEqual({ state: 'done' })
    })

    it('completes for the claim’s own TTL when given none', async () => {
      let now = 1_000_000
      const fake = fakeNamespace(() => now)
      const store = durableObjectDedupeStore(fake.namespace)
      await (await claimed(store, KEY, 30_000)).complete()
      expect(fake.objects.get(OBJECT)?.get(KEY)?.expiresAt).toBe(now + 30_000)
      now += 30_000
      expect((await store.claim(KEY, 30_000)).state).toBe('claimed')
    })

    it('answers processing, with the time the claim has left, to a copy claimed from another isolate', async () => {
      let now = 1_000_000
      const fake = fakeNamespace(() => now)
      await claimed(durableObjectDedupeStore(fake.namespace), KEY, 30_000)
      now += 10_000
      expect(await durableObjectDedupeStore(fake.namespace).claim(KEY, 30_000)).toEqual({ state: 'processing', retryAfterMs: 20_000 })
    })

    it('grants exactly one of many concurrent claims made through several stores', async () => {
      const fake = fakeNamespace()
      const stores = [1, 2, 3, 4, 5].map(() => durableObjectDedupeStore(fake.namespace))
      const results = await Promise.all(stores.flatMap((store) => Array.from({ length: 10 }, () => store.claim(KEY, 30_000))))
      expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1)
      expect(results.filter((r) => r.state === 'processing')).toHaveLength(49)
    })

    it('releases only its own claim, by its token, so a retry runs; a late release leaves a newer claim', async () => {
      let now = 1_000_000
      const fake = fakeNamespace(() => now)
      const store = durableObjectDedupeStore(fake.namespace)
      await (await claimed(store, KEY, 30_000)).release()
      const late = await claimed(store, KEY, 1000)
      now += 1000
      await claimed(store, KEY, 30_000)
      await late.release()
      expect((await store.claim(KEY, 30_000)).state).toBe('processing')
    })

    it('marks done a late complete() even over a newer claim, whose release then leaves it done', async () => {
      let now = 1_000_000
      const fake = fakeNamespace(() => now)
      const store = durableObjectDedupeStore(fake.namespace)
      const late = await claimed(store, KEY, 1000)
      now += 1000
      const newer = await claimed(store, KEY, 30_000)
      await late.complete(60_000)
      await newer.release()
      expect(await store.claim(KEY, 1000)).toEqual({ state: 'done' })
    })
  })

  describe('its shards', () => {
    it('spreads keys over 16 objects by default, each named by its number', async () => {
      const fake = fakeNamespace()
      const store = durableObjectDedupeStore(fake.namespace)
      for (let i = 0; i < 200; i++) await store.claim(`${'c'.repeat(32)}:${i.toString(16).padStart(64, '0')}`, 1000)
      expect([...fake.objects.keys()].sort()).toEqual(Array.from({ length: 16 }, (_, i) => shardName(i)).sort())
    })

    it('uses as many objects as `shards` says', async () => {
      const fake = fakeNamespace()
      const store = durableObjectDedupeStore(fake.namespace, { shards: 1 })
      for (let i = 0; i < 20; i++) await store.claim(`key-${i}`, 1000)
      expect([...fake.objects.keys()]).toEqual([shardName(0)])
    })
  })

  describe('when an object fails', () => {
    it('tries again, on a fresh stub, after a reset, and claims', async () => {
      const fake = fakeNamespace()
      fake.fail(OBJECT, resetError(), Object.assign(new Error('retry me'), { retryable: true }))
      const store = durableObjectDedupeStore(fake.namespace)
      expect((await store.claim(KEY, 30_000)).state).toBe('claimed')
      expect(fake.stubs()).toBe(3)
    })

    it('tries a completion again after a reset, so the delivery is recorded done', async () => {
      const fake = fakeNamespace()
      const store = durableObjectDedupeStore(fake.namespace)
      const claim = await claimed(store, KEY, 30_000)
      fake.fail(OBJECT, resetError(), resetError(), resetError())
      await claim.complete(60_000)
      expect(await store.claim(KEY, 1000)).toEqual({ state: 'done' })
    })

    it('tries settling for longer, eight times in all, so that a handled delivery is recorded done', async () => {
      vi.useFakeTimers()
      try {
        const fake = fakeNamespace()
        const store = durableObjectDedupeStore(fake.namespace)
        const claim = await claimed(store, KEY, 30_000)
        fake.fail(OBJECT, ...Array.from({ length: 7 }, resetError))
        const completing = claim.complete(60_000)
        await vi.runAllTimersAsync()
        await completing
        expect(fake.calls.filter((call) => call.method === 'complete')).toHaveLength(8)
        expect(await store.claim(KEY, 1000)).toEqual({ state: 'done' })

        const other = await claimed(store, `${KEY}b`, 30_000)
        const last = resetError()
        fake.fail(shardName(shardOf(`${KEY}b`, DEFAULT_SHARDS)), ...Array.from({ length: 7 }, resetError), last)
        const releasing = other.release().catch((error: unknown) => error)
        await vi.runAllTimersAsync()
        expect(await releasing).toBe(last)
      } finally {
        vi.useRealTimers()
      }
    })

    it('rejects a claim after four tries, with the last error', async () => {
      const fake = fakeNamespace()
      const last = resetError()
      fake.fail(OBJECT, resetError(), resetError(), resetError(), last)
      await expect(durableObjectDedupeStore(fake.namespace).claim(KEY, 30_000)).rejects.toBe(last)
      expect(fake.calls).toHaveLength(4)
    })

    it('rejects at once, without another try, when the object is overloaded or the error is not transient', async () => {
      for (const error of [Object.assign(new Error('overloaded'), { retryable: true, overloaded: true }), new Error('broken'), 'text']) {
        const fake = fakeNamespace()
        fake.fail(OBJECT, error)
        await expect(durableObjectDedupeStore(fake.namespace).claim(KEY, 30_000)).rejects.toBe(error)
        expect(fake.calls).toHaveLength(1)
      }
    })

    it('rejects a claim the object grants without a token', async () => {
      const namespace = { idFromName: (name: string) => name, get: () => ({ claim: async () => ({ state: 'claimed' }) }) }
      await expect(durableObjectDedupeStore(namespace).claim(KEY, 1000)).rejects.toThrow(
        new TypeError('@hookguard/cloudflare: the dedupe object granted a claim without a token'),
      )
    })

    it('makes a receiver answer 503 store_unavailable, and claims once the object answers again', async () => {
      vi.spyOn(console, 'error').mockImplementation(() => {})
      const fake = fakeNamespace()
      const secret = 'whsec-durable-object'
      const body = JSON.stringify({ event: 'order.paid', orderNo: 42 })
      const receiver = createReceiver({ auth: { mode: 'secret', secret }, dedupe: { store: durableObjectDedupeStore(fake.namespace) } })
      const request = { method: 'POST', url: '/webhooks', headers: { 'x-service-hmac-signature': await sign(body, secret) }, body }
      for (let i = 0; i < DEFAULT_SHARDS; i++) fake.fail(shardName(i), new Error('unreachable'))
      const refused = await receiver.verify(request)
      expect(refused.ok || [refused.response.status, refused.error?.code]).toEqual([503, 'store_unavailable'])
      expect((await receiver.verify(request)).ok).toBe(true)
      vi.restoreAllMocks()
    })
  })

  describe('its checks', () => {
    it('refuses something that is not a Durable Object namespace, naming the binding', () => {
      for (const namespace of [undefined, {}, { idFromName: () => 'id' }, 'DEDUPE']) {
        expect(() => durableObjectDedupeStore(namespace as never)).toThrow(/@hookguard\/cloudflare: .*namespace binding of HookguardDedupe/)
      }
    })

    for (const shards of [0, -1, 1.5, 1025, Number.NaN]) {
      it(`refuses shards ${shards} with a TypeError`, () => {
        expect(() => durableObjectDedupeStore(fakeNamespace().namespace, { shards })).toThrow(
          new TypeError('@hookguard/cloudflare: durableObjectDedupeStore shards must be a whole number from 1 to 1024'),
        )
      })
    }

    it('takes 1 and 1024 shards', () => {
      expect(() => durableObjectDedupeStore(fakeNamespace().namespace, { shards: 1 })).not.toThrow()
      expect(() => durableObjectDedupeStore(fakeNamespace().namespace, { shards: 1024 })).not.toThrow()
    })

    for (const ttl of [0, -1, 1.5, Number.POSITIVE_INFINITY]) {
      it(`refuses a TTL of ${ttl}, in claim() and complete(), without calling the object`, async () => {
        const fake = fakeNamespace()
        const store = durableObjectDedupeStore(fake.namespace)
        const error = new TypeError('@hookguard/cloudflare: a dedupe TTL must be a whole number of milliseconds, 1 or more')
        await expect(store.claim(KEY, ttl)).rejects.toThrow(error)
        const claim = await claimed(store, KEY, 1000)
        await expect(claim.complete(ttl)).rejects.toThrow(error)
        expect(fake.calls).toHaveLength(1)
      })
    }

    it('refuses an empty key and one over 2048 characters', async () => {
      const store = durableObjectDedupeStore(fakeNamespace().namespace)
      const error = new TypeError('@hookguard/cloudflare: a dedupe key must be a string of 1 to 2048 characters')
      await expect(store.claim('', 1000)).rejects.toThrow(error)
      await expect(store.claim('k'.repeat(2049), 1000)).rejects.toThrow(error)
      expect((await store.claim('k'.repeat(2048), 1000)).state).toBe('claimed')
    })
  })
})
