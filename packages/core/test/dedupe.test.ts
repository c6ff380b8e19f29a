import { createReceiver, type IncomingRequest, memoryDedupeStore, sign, type WebhookEvent, type WebhookOptions } from '@hookguard/core'
import { describe, expect, it, vi } from 'vitest'

const SECRET = 'whsec-dedupe-test'
const BODY = '{"event":"order.paid","data":{"orderNo":"SO-1","amount":12.5}}'
const PRETTY = JSON.stringify(JSON.parse(BODY), null, 2)

async function delivery(body = BODY): Promise<IncomingRequest> {
  return { method: 'POST', url: '/hooks', headers: { 'x-service-hmac-signature': await sign(BODY, SECRET) }, body }
}

function receiverWith(dedupe: WebhookOptions['dedupe'], onEvent?: (event: WebhookEvent) => void) {
  return createReceiver({ auth: { mode: 'secret', secret: SECRET }, dedupe, onEvent })
}

describe('dedupe', () => {
  it('hands on nothing to settle without the option', async () => {
    const result = await createReceiver({ auth: { mode: 'secret', secret: SECRET } }).verify(await delivery())
    expect(result.ok && result.settle).toBeUndefined()
  })

  it('answers a duplicate 409 with Retry-After while the first is handled, and 200 without the handler once it succeeded', async () => {
    const events: WebhookEvent[] = []
    const receiver = receiverWith({ processingTtl: 60 }, (event) => events.push(event))
    const first = await receiver.verify(await delivery())
    if (!first.ok || first.settle === undefined) throw new Error('expected a claimed delivery')

    const during = await receiver.verify(await delivery(PRETTY))
    expect(during.ok).toBe(false)
    expect(during.ok || [during.response.status, during.error?.code, during.response.headers['retry-after']]).toEqual([
      409,
      'duplicate_in_progress',
      '60',
    ])

    await first.settle(true)
    const after = await receiver.verify(await delivery())
    expect(after.ok || [after.error, after.response.status, JSON.parse(after.response.body)]).toEqual([
      undefined,
      200,
      { duplicate: true, fingerprint: first.delivery.fingerprint },
    ])
    expect(events.map((event) => [event.type, event.type === 'duplicate' && event.state])).toEqual([
      ['verified', false],
      ['duplicate', 'processing'],
      ['duplicate', 'done'],
    ])
  })

  it('runs the handler for the retry of a delivery whose handler failed', async () => {
    const receiver = receiverWith({})
    const first = await receiver.verify(await delivery())
    if (!first.ok || first.settle === undefined) throw new Error('expected a claimed delivery')
    await first.settle(false)
    const retry = await receiver.verify(await delivery())
    expect(retry.ok).toBe(true)
  })

  it('lets a claim whose holder died expire after processingTtl', async () => {
    let now = Date.UTC(2026, 0, 1)
    const store = memoryDedupeStore({ clock: () => now })
    const receiver = receiverWith({ store, processingTtl: 30 })
    expect((await receiver.verify(await delivery())).ok).toBe(true)
    now += 29_999
    expect((await receiver.verify(await delivery())).ok).toBe(false)
    now += 1
    expect((await receiver.verify(await delivery())).ok).toBe(true)
  })

  it('answers a duplicate of a handled delivery with duplicateStatus, for ttl seconds', async () => {
    let now = Date.UTC(2026, 0, 1)
    const receiver = receiverWith({ store: memoryDedupeStore({ clock: () => now }), ttl: 3600, duplicateStatus: 202 })
    const first = await receiver.verify(await delivery())
    if (!first.ok || first.settle === undefined) throw new Error('expected a claimed delivery')
    await first.settle(true)
    now += 3_599_000
    const within = await receiver.verify(await delivery())
    expect(within.ok || within.response.status).toBe(202)
    now += 1000
    expect((await receiver.verify(await delivery())).ok).toBe(true)
  })

  it('answers 503 store_unavailable, never a run, when the store fails; and reports a claim it cannot settle', async () => {
    const receiver = receiverWith({ store: { claim: () => Promise.reject(new Error('connect ECONNREFUSED')) } })
    const result = await receiver.verify(await delivery())
    expect(result.ok || [result.response.status, result.error?.code, result.response.headers['retry-after']]).toEqual([
      503,
      'store_unavailable',
      '30',
    ])

    const report = vi.spyOn(console, 'error').mockImplementation(() => {})
    const failing = receiverWith({
      store: {
        claim: async () => ({ state: 'claimed', claim: { complete: () => Promise.reject(new Error('gone')), release: async () => {} } }),
      },
    })
    const claimed = await failing.verify(await delivery())
    await (claimed.ok && claimed.settle?.(true))
    expect(report).toHaveBeenCalledTimes(1)
    report.mockRestore()
  })

  it.each([
    [{ store: {} }, 'dedupe.store must have a claim(key, ttlMs) method'],
    [{ ttl: 0 }, 'dedupe.ttl must be a positive integer'],
    [{ processingTtl: 1.5 }, 'dedupe.processingTtl must be a positive integer'],
    [{ duplicateStatus: 409 }, 'dedupe.duplicateStatus must be a 2xx status, so that the service stops retrying'],
  ])('refuses %o at setup', (dedupe, message) => {
    expect(() => receiverWith(dedupe as WebhookOptions['dedupe'])).toThrow(new TypeError(`@hookguard/core: ${message}`))
  })
})
