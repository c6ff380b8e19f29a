import { createReceiver, type HandoffJob, memoryDedupeStore, sign } from '@hookguard/core'
import { describe, expect, it } from 'vitest'
import { DEFAULT_QUEUE_RETENTION, MAX_QUEUED_BODY, queueHandoff } from '../src/queue-handoff.ts'
import { durableObjectDedupeStore } from '../src/store.ts'
import { fakeNamespace } from './fake-namespace.ts'
import { fakeQueue } from './fake-queue.ts'

const SECRET = 'whsec-queue-handoff-41c7'
const BODY = '{"event":"customer.created","data":{"id":884211,"name":"Ada Lovelace"}}'

async function delivery(body = BODY) {
  return {
    method: 'POST',
    url: 'https://app.example/hooks',
    headers: { 'content-type': 'application/json', 'x-service-hmac-signature': await sign(body, SECRET) },
    body: new TextEncoder().encode(body),
  }
}

/** A receiver that hands off to `handoff`, and what it answered: status and JSON body. */
function receiverOf(handoff: ReturnType<typeof queueHandoff>) {
  const receiver = createReceiver({ auth: { mode: 'secret', secret: SECRET }, handoff })
  return async (body = BODY) => {
    const result = await receiver.verify(await delivery(body))
    if (result.ok) throw new Error('a hand-off never runs the handler')
    return { status: result.response.status, body: JSON.parse(result.response.body) as Record<string, unknown> }
  }
}

describe('queueHandoff', () => {
  it('refuses 413, before sending, a body whose job no message could hold, and a larger maxBodySize at setup', async () => {
    const queue = fakeQueue()
    const handoff = queueHandoff(queue.binding)
    const receive = receiverOf(handoff)
    // Just within: its job (payload and base64 bytes) still fits a 128 KB message.
    const fits = JSON.stringify({ event: 'x', pad: 'a'.repeat(MAX_QUEUED_BODY - 30) })
    expect((await receive(fits)).status).toBe(202)
    expect(new TextEncoder().encode(JSON.stringify(queue.messages[0]?.body)).byteLength).toBeLessThan(128_000)
    const over = JSON.stringify({ event: 'x', pad: 'a'.repeat(MAX_QUEUED_BODY) })
    expect(await receive(over)).toMatchObject({ status: 413, body: { error: 'payload_too_large' } })
    expect(queue.messages).toHaveLength(1)
    // Within the body limit, but numbers that grow when parsed and written again: `1e20` is 21 digits.
    const growing = `{"event":"x","n":[${Array.from({ length: 9000 }, () => '1e20').join(',')}]}`
    expect(growing.length).toBeLessThan(MAX_QUEUED_BODY)
    const refused = await receive(growing)
    expect(refused).toMatchObject({ status: 413, body: { error: 'payload_too_large' } })
    // Not "larger than the limit": the body was within it, and the answer says what outgrew a message.
    expect(refused.body.message).toMatch(
      new RegExp(`within ${MAX_QUEUED_BODY} bytes, but its queue message would be \\d+ bytes, over the 128000`),
    )
    expect(refused.body.message).not.toMatch(/larger than the limit/)
    expect(queue.messages).toHaveLength(1)
    expect(() => createReceiver({ auth: { mode: 'secret', secret: SECRET }, handoff, maxBodySize: MAX_QUEUED_BODY + 1 })).toThrow(
      /maxBodySize/,
    )
  })

  describe('with a store', () => {
    it('sends the job as one JSON message and answers 202 with its id', async () => {
      const queue = fakeQueue()
      const receive = receiverOf(queueHandoff(queue.binding, { store: durableObjectDedupeStore(fakeNamespace().namespace) }))
      const answer = await receive()
      expect(answer).toEqual({ status: 202, body: { queued: true, jobId: expect.stringMatching(/^hg-[0-9a-f]{64}$/) } })
      expect(queue.messages).toHaveLength(1)
      const [message] = queue.messages
      expect(message?.options).toEqual({ contentType: 'json' })
      const job = message?.body as HandoffJob
      expect(job.id).toBe(answer.body.jobId)
      expect(job.payload).toEqual(JSON.parse(BODY))
      expect(new TextDecoder().decode(Uint8Array.from(atob(job.rawBody), (c) => c.charCodeAt(0)))).toBe(BODY)
    })

    it('answers a copy of a queued delivery 200 as a duplicate, without a second message', async () => {
      const queue = fakeQueue()
      const receive = receiverOf(queueHandoff(queue.binding, { store: durableObjectDedupeStore(fakeNamespace().namespace) }))
      await receive()
      const copy = await receive(JSON.stringify(JSON.parse(BODY), null, 2))
      expect(copy).toEqual({ status: 200, body: { duplicate: true, fingerprint: expect.any(String) } })
      expect(queue.messages).toHaveLength(1)
      expect((await receive('{"event":"customer.created","data":{"id":884212}}')).status).toBe(202)
      expect(queue.messages).toHaveLength(2)
    })

    it('answers 503 when the send fails, and gives the marker back so the service’s retry is queued', async () => {
      const queue = fakeQueue()
      const receive = receiverOf(queueHandoff(queue.binding, { store: durableObjectDedupeStore(fakeNamespace().namespace) }))
      queue.fail(new Error('Queue send failed: internal error'))
      const refused = await receive()
      expect(refused).toEqual({ status: 503, body: { error: 'queue_unavailable', message: expect.any(String) } })
      expect(queue.messages).toHaveLength(0)
      expect((await receive()).status).toBe(202)
      expect(queue.messages).toHaveLength(1)
    })

    it('answers 503, not a duplicate, to a copy that arrives while the first is still being sent', async () => {
      const queue = fakeQueue()
      const receive = receiverOf(queueHandoff(queue.binding, { store: durableObjectDedupeStore(fakeNamespace().namespace) }))
      const release = queue.hold()
      const first = receive()
      // The first copy's marker is claimed before its send waits.
      await new Promise((resolve) => setTimeout(resolve, 10))
      expect((await receive()).status).toBe(503)
      release()
      expect((await first).status).toBe(202)
      expect((await receive()).status).toBe(200)
      expect(queue.messages).toHaveLength(1)
    })

    it('loses no delivery when the first copy’s send fails after a copy was turned away', async () => {
      const queue = fakeQueue()
      const receive = receiverOf(queueHandoff(queue.binding, { store: durableObjectDedupeStore(fakeNamespace().namespace) }))
      const release = queue.hold()
      queue.fail(new Error('Queue send failed'))
      const first = receive()
      await new Promise((resolve) => setTimeout(resolve, 10))
      const copy = await receive()
      release()
      expect([(await first).status, copy.status]).toEqual([503, 503])
      expect((await receive()).status).toBe(202)
      expect(queue.messages).toHaveLength(1)
    })

    it('keeps the marker for the retention: a copy after it is queued again', async () => {
      let now = 1_000_000
      const queue = fakeQueue()
      const store = durableObjectDedupeStore(fakeNamespace(() => now).namespace)
      const receive = receiverOf(queueHandoff(queue.binding, { store, retention: 60 }))
      await receive()
      now += 59_999
      expect((await receive()).status).toBe(200)
      now += 1
      expect((await receive()).status).toBe(202)
      expect(queue.messages).toHaveLength(2)
    })

    it('answers 202 when the marker cannot be completed after the send: the message is queued', async () => {
      const queue = fakeQueue()
      const fake = fakeNamespace()
      const store = durableObjectDedupeStore(fake.namespace, { shards: 1 })
      const receive = receiverOf(queueHandoff(queue.binding, { store }))
      const overloaded = Object.assign(new Error('overloaded'), { overloaded: true })
      // The claim succeeds; the completion fails.
      const claim = store.claim.bind(store)
      store.claim = async (key, ttl) => {
        const found = await claim(key, ttl)
        fake.fail('hookguard-dedupe:0', overloaded)
        return found
      }
      expect((await receive()).status).toBe(202)
      expect(queue.messages).toHaveLength(1)
    })

    it('answers 503 when the store cannot be reached, and sends nothing', async () => {
      const queue = fakeQueue()
      const fake = fakeNamespace()
      const store = durableObjectDedupeStore(fake.namespace, { shards: 1 })
      fake.fail('hookguard-dedupe:0', Object.assign(new Error('overloaded'), { overloaded: true }))
      const receive = receiverOf(queueHandoff(queue.binding, { store }))
      expect((await receive()).status).toBe(503)
      expect(queue.messages).toHaveLength(0)
    })

    it('holds the marker while sending for twice the timeout, then keeps it for four days by default', async () => {
      const queue = fakeQueue()
      const claims: number[] = []
      const completions: (number | undefined)[] = []
      const store = memoryDedupeStore()
      const spy = {
        async claim(key: string, ttlMs: number) {
          claims.push(ttlMs)
          const found = await store.claim(key, ttlMs)
          if (found.state !== 'claimed') return found
          const { release } = found.claim
          return { state: 'claimed' as const, claim: { release, complete: async (ms?: number) => void completions.push(ms) } }
        },
      }
      await receiverOf(queueHandoff(queue.binding, { store: spy, timeout: 1500 }))()
      expect(claims).toEqual([3000])
      expect(completions).toEqual([DEFAULT_QUEUE_RETENTION * 1000])
    })
  })

  describe('without a store', () => {
    it('sends every copy: the consumer’s store runs the handler once', async () => {
      const queue = fakeQueue()
      const receive = receiverOf(queueHandoff(queue.binding))
      expect((await receive()).status).toBe(202)
      expect((await receive()).status).toBe(202)
      expect(queue.messages).toHaveLength(2)
    })

    it('answers 503 queue_unavailable with Retry-After when the send fails', async () => {
      const queue = fakeQueue()
      const receiver = createReceiver({ auth: { mode: 'secret', secret: SECRET }, handoff: queueHandoff(queue.binding) })
      queue.fail(new TypeError('Queue send failed: the binding is not a queue'))
      const result = await receiver.verify(await delivery())
      expect(result.ok === false && result.response.status).toBe(503)
      expect(result.ok === false && result.response.headers['retry-after']).toBe('5')
    })

    it('answers 503 after `timeout` when the queue never answers', async () => {
      const queue = fakeQueue()
      queue.hold()
      const receive = receiverOf(queueHandoff(queue.binding, { timeout: 30 }))
      expect((await receive()).status).toBe(503)
    })

    it('answers with `status`', async () => {
      const queue = fakeQueue()
      expect((await receiverOf(queueHandoff(queue.binding, { status: 200 }))()).status).toBe(200)
    })
  })

  describe('its setup', () => {
    it('refuses what is not a queue producer binding, a store or a retention', () => {
      const { binding } = fakeQueue()
      for (const wrong of [undefined, {}, { send: 'x' }]) {
        expect(() => queueHandoff(wrong as never)).toThrow(
          /^@hookguard\/cloudflare: queueHandoff takes the Worker’s queue producer binding/,
        )
      }
      expect(() => queueHandoff(binding, { store: {} as never })).toThrow(/store must be a DedupeStore/)
      for (const retention of [0, 1.5, 1_209_601, Number.NaN]) {
        expect(() => queueHandoff(binding, { retention })).toThrow(/retention must be a whole number/)
      }
    })

    it('leaves status and timeout to the core’s checks of the handoff option', () => {
      const { binding } = fakeQueue()
      expect(() => createReceiver({ auth: { mode: 'none' }, handoff: queueHandoff(binding, { status: 302 }) })).toThrow(/2xx/)
      expect(() => createReceiver({ auth: { mode: 'none' }, handoff: queueHandoff(binding, { timeout: -1 }) })).toThrow(/timeout/)
    })
  })
})
