import { createReceiver, type IncomingRequest, sign } from '@hookguard/core'
import { type RedisServer, startRedis } from '@hookguard/testkit/redis-server'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { redisDedupeStore } from '../src/index.ts'
import { type Connected, flavours, uniquePrefix } from './clients.ts'

// The receiver of @hookguard/core with the Redis store, as every adapter uses it: several
// receivers over their own connections are several instances of one app.

const SECRET = 'whsec-redis-receiver'

let server: RedisServer
beforeAll(async () => {
  server = await startRedis()
})
afterAll(async () => {
  await server?.stop().catch(() => {})
})

async function delivery(body: string): Promise<IncomingRequest> {
  return { method: 'POST', url: '/webhooks', headers: { 'x-service-hmac-signature': await sign(body, SECRET) }, body }
}

describe.each(flavours)('receivers deduping through Redis over $name', (flavour) => {
  const open: Connected[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()))
  })
  const instances = async (count: number) => {
    const prefix = uniquePrefix()
    return Promise.all(
      Array.from({ length: count }, async () => {
        const connected = await flavour.connect(server.url)
        open.push(connected)
        return createReceiver({
          auth: { mode: 'secret', secret: SECRET },
          dedupe: { store: redisDedupeStore(connected.client, { prefix }) },
        })
      }),
    )
  }

  it('runs one handler for a delivery sent to three instances at once, and answers the others 409', async () => {
    const body = JSON.stringify({ event: 'order.paid', orderNo: globalThis.crypto.randomUUID() })
    const receivers = await instances(3)
    const results = await Promise.all(receivers.map(async (receiver) => receiver.verify(await delivery(body))))
    expect(results.filter((result) => result.ok)).toHaveLength(1)
    expect(results.filter((result) => !result.ok).map((result) => !result.ok && [result.response.status, result.error?.code])).toEqual([
      [409, 'duplicate_in_progress'],
      [409, 'duplicate_in_progress'],
    ])
  })

  it('answers a duplicate on another instance 200 without the handler once the first succeeded', async () => {
    const body = JSON.stringify({ event: 'order.paid', orderNo: globalThis.crypto.randomUUID() })
    const [one, two] = await instances(2)
    const first = await one?.verify(await delivery(body))
    if (!first?.ok || first.settle === undefined) throw new Error('expected a claimed delivery')
    await first.settle(true)
    const again = await two?.verify(await delivery(body))
    expect(again?.ok || again?.response.status).toBe(200)
    expect(again?.ok).toBe(false)
  })

  it('answers a duplicate 409 with a Retry-After as long as the claim has been held, within the time it has left', async () => {
    const body = JSON.stringify({ event: 'order.paid', orderNo: globalThis.crypto.randomUUID() })
    const prefix = uniquePrefix()
    const [one, two] = await Promise.all(
      [0, 1].map(async () => {
        const connected = await flavour.connect(server.url)
        open.push(connected)
        const receiver = createReceiver({
          auth: { mode: 'secret', secret: SECRET },
          // The fingerprint alone, to find the claim's key in Redis.
          dedupe: { store: redisDedupeStore(connected.client, { prefix }), processingTtl: 300, key: (_req, d) => d.fingerprint },
        })
        return { receiver, connected }
      }),
    )
    const first = await one?.receiver.verify(await delivery(body))
    if (!first?.ok) throw new Error('expected a claimed delivery')
    const key = prefix + first.delivery.fingerprint
    const retryAfter = async () => {
      const result = await two?.receiver.verify(await delivery(body))
      return result?.ok === false ? [result.response.status, result.response.headers['retry-after']] : result?.ok
    }
    // Just taken: 1 s, not the 300 s of processingTtl.
    expect(await retryAfter()).toEqual([409, '1'])
    // Held for 44.5 s (the claim has 255.5 s left): 45 s, in whole seconds rounded up.
    await one?.connected.raw(['PEXPIRE', key, '255500'])
    expect(await retryAfter()).toEqual([409, '45'])
    // Held for 290 s: no later than its expiry, 10 s from now.
    await one?.connected.raw(['PEXPIRE', key, '10000'])
    expect(await retryAfter()).toEqual([409, '10'])
  })

  it('lets another instance run the retry of a delivery whose handler failed', async () => {
    const body = JSON.stringify({ event: 'order.paid', orderNo: globalThis.crypto.randomUUID() })
    const [one, two] = await instances(2)
    const first = await one?.verify(await delivery(body))
    if (!first?.ok || first.settle === undefined) throw new Error('expected a claimed delivery')
    await first.settle(false)
    expect((await two?.verify(await delivery(body)))?.ok).toBe(true)
  })
})
