import { createReceiver, type HandoffJob, type HandoffQueue, memoryDedupeStore, type StandardSchemaV1, sign } from '@hookguard/core'
import { wrappingClaims } from '@hookguard/testkit/claims'
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest'
import { queueConsumer } from '../src/queue-consumer.ts'
import { fakeBatch } from './fake-queue.ts'

const SECRET = 'whsec-queue-consumer-7a2e'

interface Order {
  event: string
  order: { id: number; total: string }
}

/** Jobs as the core's receiver makes them, for the bodies given, read back from JSON as a queue carries them. */
async function jobsOf(...bodies: string[]): Promise<HandoffJob[]> {
  const jobs: HandoffJob[] = []
  const queue: HandoffQueue = {
    async enqueue(job) {
      jobs.push(JSON.parse(JSON.stringify(job)) as HandoffJob)
      return { jobId: job.id, duplicate: false }
    },
  }
  const receiver = createReceiver({ auth: { mode: 'secret', secret: SECRET }, handoff: { queue } })
  for (const body of bodies) {
    await receiver.verify({
      method: 'POST',
      url: 'https://app.example/hooks',
      headers: { 'content-type': 'application/json', 'x-service-hmac-signature': await sign(body, SECRET) },
      body: new TextEncoder().encode(body),
    })
  }
  return jobs
}

const ORDER = '{"event":"order.paid","order":{"id":17,"total":"12.50"}}'
const OTHER = '{"event":"order.paid","order":{"id":18,"total":"3.00"}}'

/** A schema that wants a numeric order id, naming the failing path, never the value. */
const orderSchema: StandardSchemaV1<unknown, Order> = {
  '~standard': {
    version: 1,
    vendor: 'test',
    validate: (value) =>
      typeof (value as Order | null)?.order?.id === 'number'
        ? { value: value as Order }
        : { issues: [{ message: 'expected a number', path: ['order', 'id'] }] },
  },
}

let errors: MockInstance<typeof console.error>
beforeEach(() => {
  errors = vi.spyOn(console, 'error').mockImplementation(() => {})
})
afterEach(() => {
  errors.mockRestore()
})

describe('queueConsumer', () => {
  it('runs the handler with the delivery, its exact bytes, env and ctx, and acknowledges the message', async () => {
    const [job] = await jobsOf(ORDER)
    const seen: unknown[] = []
    const env = { NAME: 'env' }
    const ctx = { waitUntil() {} }
    const queue = queueConsumer<Order, typeof env, typeof ctx>((delivery, e, c) => void seen.push(delivery, e, c))
    const { batch, settled } = fakeBatch([job])
    await queue(batch, env, ctx)
    expect(settled).toEqual([{ acked: 1, retried: [] }])
    const [delivery] = seen as [{ jobId: string; payload: unknown; rawBody: Uint8Array; receivedAt: Date }]
    expect(delivery.jobId).toBe(job?.id)
    expect(delivery.payload).toEqual(JSON.parse(ORDER))
    expect(new TextDecoder().decode(delivery.rawBody)).toBe(ORDER)
    expect(delivery.receivedAt).toBeInstanceOf(Date)
    expect(seen.slice(1)).toEqual([env, ctx])
  })

  it('runs a delivery once with a store, however many messages carry it, and acknowledges each', async () => {
    const [job] = await jobsOf(ORDER)
    let runs = 0
    const queue = queueConsumer(
      () => {
        runs++
      },
      { store: memoryDedupeStore() },
    )
    const first = fakeBatch([job])
    await queue(first.batch, {}, {})
    const again = fakeBatch([job, job], { attempts: 2 })
    await queue(again.batch, {}, {})
    expect(runs).toBe(1)
    expect([...first.settled, ...again.settled].map((s) => s.acked)).toEqual([1, 1, 1])
  })

  it('retries a message whose handler throws, gives the claim back, and runs it on the next attempt', async () => {
    const [job] = await jobsOf(ORDER)
    let runs = 0
    const queue = queueConsumer(
      () => {
        if (++runs < 3) throw new Error(`run ${runs} failed`)
      },
      { store: memoryDedupeStore() },
    )
    const outcomes = []
    for (let attempts = 1; attempts <= 3; attempts++) {
      const { batch, settled } = fakeBatch([job], { attempts })
      await queue(batch, {}, {})
      outcomes.push(settled[0])
    }
    expect(outcomes).toEqual([
      { acked: 0, retried: [undefined] },
      { acked: 0, retried: [undefined] },
      { acked: 1, retried: [] },
    ])
    expect(runs).toBe(3)
  })

  it('treats a TypeError thrown by the handler as the handler’s failure, not as a poisoned message', async () => {
    const [job] = await jobsOf(ORDER)
    const queue = queueConsumer(() => {
      throw new TypeError('Cannot read properties of undefined')
    })
    const { batch, settled } = fakeBatch([job])
    await queue(batch, {}, {})
    expect(settled[0]?.retried).toEqual([undefined])
  })

  it('retries after `retryDelay`, a number or a function of the attempts', async () => {
    const [job] = await jobsOf(ORDER)
    const failing = () => {
      throw new Error('down')
    }
    const fixed = fakeBatch([job], { attempts: 2 })
    await queueConsumer(failing, { retryDelay: 30 })(fixed.batch, {}, {})
    const backoff = fakeBatch([job], { attempts: 3 })
    await queueConsumer(failing, { retryDelay: (attempts) => 2 ** attempts })(backoff.batch, {}, {})
    expect([fixed.settled[0]?.retried, backoff.settled[0]?.retried]).toEqual([[{ delaySeconds: 30 }], [{ delaySeconds: 8 }]])
  })

  it('retries a message another consumer is running once that claim can have settled', async () => {
    const [job] = await jobsOf(ORDER)
    const store = memoryDedupeStore()
    let release = () => {}
    const holding = new Promise<void>((resolve) => {
      release = resolve
    })
    const queue = queueConsumer(() => holding, { store, processingTtl: 90 })
    const first = fakeBatch([job])
    const running = queue(first.batch, {}, {})
    await vi.waitFor(async () => expect((await store.claim(job?.key as string, 1)).state).toBe('processing'))
    const copy = fakeBatch([job])
    await queue(copy.batch, {}, {})
    release()
    await running
    expect(copy.settled[0]?.acked).toBe(0)
    const [options] = copy.settled[0]?.retried ?? []
    expect(options?.delaySeconds).toBeGreaterThanOrEqual(89)
    expect(options?.delaySeconds).toBeLessThanOrEqual(90)
    expect(first.settled[0]).toEqual({ acked: 1, retried: [] })
  })

  it('retries a body that is no hookguard job at once, toward the dead-letter queue, and the rest of the batch goes on', async () => {
    const [good, other] = await jobsOf(ORDER, OTHER)
    let runs = 0
    const queue = queueConsumer(() => void runs++)
    const { batch, settled } = fakeBatch([good, { hello: 'secret-body-CANARY' }, 'text', other])
    await queue(batch, {}, {})
    expect(settled).toEqual([
      { acked: 1, retried: [] },
      { acked: 0, retried: [{ delaySeconds: 0 }] },
      { acked: 0, retried: [{ delaySeconds: 0 }] },
      { acked: 1, retried: [] },
    ])
    expect(runs).toBe(2)
    expect(errors.mock.calls.map((call) => String(call[0]))).toEqual([
      expect.stringContaining('message message-1 of queue webhooks cannot run (it is no hookguard job)'),
      expect.stringContaining('message message-2 of queue webhooks cannot run'),
    ])
    expect(JSON.stringify(errors.mock.calls)).not.toContain('CANARY')
  })

  it('retries a payload the schema refuses at once, naming the path, never the value, and never runs the handler', async () => {
    const [bad] = await jobsOf('{"event":"order.paid","order":{"id":"secret-id-CANARY","total":"1"}}')
    const [good] = await jobsOf(ORDER)
    const paid: Order[] = []
    const queue = queueConsumer((delivery) => void paid.push(delivery.payload), { schema: orderSchema, store: memoryDedupeStore() })
    const { batch, settled } = fakeBatch([bad, good])
    await queue(batch, {}, {})
    expect(settled).toEqual([
      { acked: 0, retried: [{ delaySeconds: 0 }] },
      { acked: 1, retried: [] },
    ])
    expect(paid).toEqual([JSON.parse(ORDER)])
    expect(String(errors.mock.calls[0]?.[0])).toContain('fails the schema at order.id')
    expect(JSON.stringify(errors.mock.calls)).not.toContain('CANARY')
  })

  it('makes a store of env once, on the first batch', async () => {
    const [job, other] = await jobsOf(ORDER, OTHER)
    const made: unknown[] = []
    const env = { DEDUPE: 'binding' }
    const queue = queueConsumer(() => {}, {
      store: (e: typeof env) => {
        made.push(e.DEDUPE)
        return memoryDedupeStore()
      },
    })
    await queue(fakeBatch([job]).batch, env, {})
    const again = fakeBatch([job, other])
    await queue(again.batch, env, {})
    expect(made).toEqual(['binding'])
    expect(again.settled.map((s) => s.acked)).toEqual([1, 1])
  })

  it('retries when the store cannot be reached, and the handler does not run', async () => {
    const [job] = await jobsOf(ORDER)
    let runs = 0
    const queue = queueConsumer(() => void runs++, {
      store: {
        claim: async () => {
          throw new Error('store down')
        },
      },
    })
    const { batch, settled } = fakeBatch([job])
    await queue(batch, {}, {})
    expect(settled[0]).toEqual({ acked: 0, retried: [undefined] })
    expect(runs).toBe(0)
  })

  it('acknowledges a message whose done mark failed twice after the handler succeeded, and never runs it again', async () => {
    const [job] = await jobsOf(ORDER)
    const shared = memoryDedupeStore()
    let failures = 2
    let runs = 0
    const queue = queueConsumer(() => void runs++, {
      store: wrappingClaims(shared, (claim) => ({
        release: () => claim.release(),
        async complete(ms) {
          if (failures-- > 0) throw new Error('store reset')
          await claim.complete(ms)
        },
      })),
    })
    const first = fakeBatch([job])
    await queue(first.batch, {}, {})
    expect(first.settled[0]).toEqual({ acked: 1, retried: [] })
    const again = fakeBatch([job], { attempts: 2 })
    await queue(again.batch, {}, {})
    expect(again.settled[0]).toEqual({ acked: 1, retried: [] })
    expect(runs).toBe(1)
  })

  it('refuses a wrong setup when it is made, not on the first batch', () => {
    expect(() => queueConsumer(undefined as never)).toThrow(/^@hookguard\/cloudflare: queueConsumer takes the handler/)
    expect(() => queueConsumer(() => {}, { store: {} as never })).toThrow(/store must be a DedupeStore/)
    for (const retryDelay of [-1, 1.5, 43_201]) expect(() => queueConsumer(() => {}, { retryDelay })).toThrow(/retryDelay/)
    for (const ttl of [0, 2.5]) {
      expect(() => queueConsumer(() => {}, { ttl })).toThrow(/ttl must be/)
      expect(() => queueConsumer(() => {}, { processingTtl: ttl })).toThrow(/processingTtl must be/)
    }
  })
})
