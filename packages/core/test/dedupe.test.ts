import {
  type ClaimResult,
  createReceiver,
  type DedupeStore,
  type IncomingRequest,
  memoryDedupeStore,
  sign,
  type WebhookEvent,
  type WebhookOptions,
} from '@hookguard/core'
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
      '1',
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
      claimTimeout: 100,
    })
    const claimed = await failing.verify(await delivery())
    await (claimed.ok && claimed.settle?.(true))
    expect(report).toHaveBeenCalledTimes(1)
    expect(report.mock.calls[0]?.[0]).toBe(
      "@hookguard/core: a delivery's done mark could not be written within claimTimeout; it is sent again while its claim holds, which otherwise expires on its own.",
    )
    await (claimed.ok && claimed.settle?.(false))
    expect(report).toHaveBeenCalledTimes(1)
    report.mockRestore()
  })

  it('answers 503 store_unavailable when a claim does not answer within 5 s, and gives back a claim that arrives later', async () => {
    const request = await delivery()
    let answer: ((found: ClaimResult) => void) | undefined
    const receiver = receiverWith({
      store: { claim: () => new Promise<ClaimResult>((resolve) => (answer = resolve)) },
      processingTtl: 20,
    })
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const pending = receiver.verify(request)
      // Until the request reaches the store (setImmediate is left real; vi.waitFor would move the clock).
      while (answer === undefined) await new Promise((resolve) => setImmediate(resolve))
      await vi.advanceTimersByTimeAsync(4_999)
      let settled = false
      void pending.then(() => (settled = true))
      await vi.advanceTimersByTimeAsync(0)
      expect(settled).toBe(false)
      await vi.advanceTimersByTimeAsync(1)
      const result = await pending
      expect(result.ok || [result.response.status, result.error?.code, result.response.headers['retry-after']]).toEqual([
        503,
        'store_unavailable',
        '20',
      ])
      // The store answers at last: the claim nobody runs a handler for is released, so the retry runs.
      const release = vi.fn(async () => {})
      answer?.({ state: 'claimed', claim: { complete: async () => {}, release } })
      for (let turn = 0; turn < 10 && release.mock.calls.length === 0; turn++) await new Promise((resolve) => setImmediate(resolve))
      expect(release).toHaveBeenCalledTimes(1)
    } finally {
      vi.useRealTimers()
    }
  })

  it('bounds the claim by dedupe.claimTimeout milliseconds', async () => {
    const receiver = receiverWith({ store: { claim: () => new Promise<ClaimResult>(() => {}) }, claimTimeout: 50 })
    const started = Date.now()
    const result = await receiver.verify(await delivery())
    expect(result.ok || [result.response.status, result.error?.code]).toEqual([503, 'store_unavailable'])
    expect(Date.now() - started).toBeLessThan(2_000)
  })

  it.each([
    [{ store: {} }, 'dedupe.store must have a claim(key, ttlMs) method'],
    [{ ttl: 0 }, 'dedupe.ttl must be a positive integer'],
    [{ processingTtl: 1.5 }, 'dedupe.processingTtl must be a positive integer'],
    [{ claimTimeout: 0 }, 'dedupe.claimTimeout must be a positive integer'],
    [{ duplicateStatus: 409 }, 'dedupe.duplicateStatus must be a 2xx status, so that the service stops retrying'],
    [{ key: 'order-id' }, 'dedupe.key must be a function of the request and the delivery'],
  ])('refuses %o at setup', (dedupe, message) => {
    expect(() => receiverWith(dedupe as WebhookOptions['dedupe'])).toThrow(new TypeError(`@hookguard/core: ${message}`))
  })
})

describe('dedupe key', () => {
  /** A store shared by every receiver of a test, as one Redis is shared by several addresses. */
  const shared = () => memoryDedupeStore()
  const signed = async (secret: string, body = BODY, url = '/hooks'): Promise<IncomingRequest> => ({
    method: 'POST',
    url,
    headers: { 'x-service-hmac-signature': await sign(body, secret) },
    body,
  })
  /** Verifies and, when claimed, settles as handled: the delivery ran. */
  async function handle(
    receiver: { verify(request: IncomingRequest): Promise<unknown> },
    request: IncomingRequest,
  ): Promise<'ran' | 'duplicate'> {
    const result = (await receiver.verify(request)) as Awaited<ReturnType<ReturnType<typeof createReceiver>['verify']>>
    if (!result.ok) return 'duplicate'
    await result.settle?.(true)
    return 'ran'
  }

  it("keeps tenants apart: a payload one tenant signs with its own secret never blocks another tenant's genuine delivery", async () => {
    const store = shared()
    const secrets: Record<string, string> = { '/hooks/a': 'whsec-tenant-a-0c41', '/hooks/b': 'whsec-tenant-b-9e27' }
    const receiver = createReceiver({ auth: { mode: 'secret', secret: (req) => secrets[req.url.pathname] }, dedupe: { store } })
    // Tenant A posts B's expected payload, signed with A's secret, to A's address first.
    expect(await handle(receiver, await signed(secrets['/hooks/a'] as string, BODY, '/hooks/a'))).toBe('ran')
    expect(await handle(receiver, await signed(secrets['/hooks/b'] as string, BODY, '/hooks/b'))).toBe('ran')
    expect(await handle(receiver, await signed(secrets['/hooks/b'] as string, PRETTY, '/hooks/b'))).toBe('duplicate')
  })

  it('keeps two addresses with their own secrets apart in one store, and one signing secret one scope while the set changes around it', async () => {
    const store = shared()
    const first = createReceiver({ auth: { mode: 'secret', secret: 'whsec-address-one' }, dedupe: { store } })
    const second = createReceiver({ auth: { mode: 'secret', secret: 'whsec-address-two' }, dedupe: { store } })
    expect(await handle(first, await signed('whsec-address-one'))).toBe('ran')
    expect(await handle(second, await signed('whsec-address-two'))).toBe('ran')
    // Rotating as the README says: the receiver's set changes around one signing secret.
    const before = createReceiver({ auth: { mode: 'secret', secret: 'whsec-old' }, dedupe: { store } })
    const during = createReceiver({ auth: { mode: 'secret', secret: ['whsec-new', 'whsec-old'] }, dedupe: { store } })
    expect(await handle(before, await signed('whsec-old'))).toBe('ran')
    expect(await handle(during, await signed('whsec-old'))).toBe('duplicate')
    expect(await handle(during, await signed('whsec-new', PRETTY))).toBe('ran')
    const after = createReceiver({ auth: { mode: 'secret', secret: 'whsec-new' }, dedupe: { store } })
    expect(await handle(after, await signed('whsec-new'))).toBe('duplicate')
  })

  it('keeps two Basic addresses, the users one Basic verify accepts, and two unauthenticated addresses apart in one store', async () => {
    const store = shared()
    const body = '{"event":"ping"}'
    const basic = (password: string) => createReceiver({ auth: { mode: 'basic', username: 'service', password }, dedupe: { store } })
    const authorization = (password: string) => `Basic ${btoa(`service:${password}`)}`
    const post = (url: string, headers: Record<string, string> = {}): IncomingRequest => ({ method: 'POST', url, headers, body })
    expect(await handle(basic('one-password'), post('/hooks', { authorization: authorization('one-password') }))).toBe('ran')
    expect(await handle(basic('two-password'), post('/hooks', { authorization: authorization('two-password') }))).toBe('ran')
    const none = createReceiver({ auth: { mode: 'none' }, dedupe: { store } })
    expect(await handle(none, post('/hooks/one'))).toBe('ran')
    expect(await handle(none, post('/hooks/two'))).toBe('ran')
    expect(await handle(none, post('/hooks/two?retry=1'))).toBe('duplicate')
    for (const variant of ['/hooks/two/', '/HOOKS/Two', '/hooks/two//'])
      expect(await handle(none, post(variant)), variant).toBe('duplicate')
    const byVerify = createReceiver({ auth: { mode: 'basic', verify: (user) => user.startsWith('tenant-') }, dedupe: { store } })
    const asUser = (user: string) => post('/hooks', { authorization: `Basic ${btoa(`${user}:pw`)}` })
    expect(await handle(byVerify, asUser('tenant-a'))).toBe('ran')
    expect(await handle(byVerify, asUser('tenant-b'))).toBe('ran')
    expect(await handle(byVerify, asUser('tenant-b'))).toBe('duplicate')
  })

  it('claims the key dedupe.key gives, with the request and the verified delivery, and never puts a secret in a key', async () => {
    const keys: string[] = []
    const store = memoryDedupeStore()
    const recording = {
      claim: (key: string, ttlMs: number) => {
        keys.push(key)
        return store.claim(key, ttlMs)
      },
    }
    const custom = createReceiver({
      auth: { mode: 'secret', secret: SECRET },
      dedupe: {
        store: recording,
        key: (req, delivery) => `${req.url.pathname}:${(delivery.payload as { data: { orderNo: string } }).data.orderNo}`,
      },
    })
    expect(await handle(custom, await delivery())).toBe('ran')
    expect(await handle(custom, await delivery(PRETTY))).toBe('duplicate')
    const scoped = createReceiver({ auth: { mode: 'secret', secret: SECRET }, dedupe: { store: recording } })
    const result = await scoped.verify(await delivery())
    expect(keys.slice(0, 2)).toEqual(['/hooks:SO-1', '/hooks:SO-1'])
    expect(keys[2]).toMatch(/^[0-9a-f]{32}:[0-9a-f]{64}$/)
    expect(keys[2]?.endsWith(result.ok ? result.delivery.fingerprint : 'unverified')).toBe(true)
    expect(keys.join()).not.toContain(SECRET)
  })

  it('refuses a dedupe.key that returns no key, as a mistake of the app', async () => {
    const receiver = createReceiver({ auth: { mode: 'secret', secret: SECRET }, dedupe: { key: () => '' } })
    await expect(receiver.verify(await delivery())).rejects.toThrow(
      new TypeError('@hookguard/core: dedupe.key must return a non-empty string'),
    )
  })

  it('takes a retry of a form delivery with a fresh token for the same delivery; the token stays in rawBody', async () => {
    const auth = { mode: 'oauth2', appId: 'wx-app-dedupe', secret: 'oauth-dedupe-secret-3a9c' } as const
    const receiver = createReceiver({ auth, dedupe: {} })
    // Two tokens issued a second apart differ.
    let issuedAt = Date.now()
    const issuer = createReceiver({ auth, clock: () => issuedAt }, { role: 'token' })
    const token = async () =>
      JSON.parse(
        (
          await issuer.token({
            method: 'GET',
            url: `/token?appid=${auth.appId}&secret=${auth.secret}&grant_type=client_credentials`,
            headers: {},
            body: null,
          })
        ).body,
      ).access_token as string
    const form = async (access: string): Promise<IncomingRequest> => ({
      method: 'POST',
      url: '/hooks',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `event=order.paid&orderNo=SO-1&access_token=${access}`,
    })
    const first = await receiver.verify(await form(await token()))
    if (!first.ok) throw new Error('expected a verified delivery')
    expect(new TextDecoder().decode(first.delivery.rawBody)).toContain('access_token=')
    await first.settle?.(true)
    issuedAt += 1000
    const fresh = await token()
    expect(new TextDecoder().decode(first.delivery.rawBody)).not.toContain(fresh)
    const retry = await receiver.verify(await form(fresh))
    expect(retry.ok || JSON.parse(retry.response.body)).toEqual({ duplicate: true, fingerprint: first.delivery.fingerprint })
  })
})

describe('dedupe with a store that breaks its interface', () => {
  const claimedWith = (claim: Partial<Record<'complete' | 'release', () => unknown>>): DedupeStore => ({
    claim: async () => ({ state: 'claimed', claim: { complete: async () => {}, release: async () => {}, ...claim } as never }),
  })

  it.each([
    ['an unknown state', { claim: async () => ({ state: 'maybe' }) as never }],
    ['nothing', { claim: async () => undefined as never }],
    ['a claim without its methods', { claim: async () => ({ state: 'claimed' }) as never }],
    ['a claim without release', { claim: async () => ({ state: 'claimed', claim: { complete: async () => {} } }) as never }],
    ['a claim without complete', { claim: async () => ({ state: 'claimed', claim: { release: async () => {} } }) as never }],
    [
      'a claim under an unknown state',
      { claim: async () => ({ state: 'granted', claim: { complete: async () => {}, release: async () => {} } }) as never },
    ],
    ['processing, without a Retry-After', { claim: async () => ({ state: 'processing' }) as never }],
    ['processing, with a Retry-After as text', { claim: async () => ({ state: 'processing', retryAfterMs: '5000' }) as never }],
    [
      'a throw at once',
      {
        claim: () => {
          throw new Error('boom')
        },
      },
    ],
  ] as [string, DedupeStore][])('answers 503 store_unavailable, never a run, for a claim answered with %s', async (_, store) => {
    const result = await receiverWith({ store }).verify(await delivery())
    expect(result.ok || [result.response.status, result.error?.code]).toEqual([503, 'store_unavailable'])
  })

  it('says why in the answer and in the error: the store, and the time it was given', async () => {
    const result = await receiverWith({ store: { claim: () => new Promise<ClaimResult>(() => {}) }, claimTimeout: 20 }).verify(
      await delivery(),
    )
    if (result.ok) throw new Error('expected a refusal')
    expect(JSON.parse(result.response.body).message).toBe(
      'The delivery store cannot be reached; the delivery was not processed. Try again later.',
    )
    expect(result.error?.cause).toEqual(new Error('the dedupe store did not answer within 20 ms'))
  })

  it('answers a store that fails at once, with its own error, not when the claim timeout runs out', async () => {
    const refused = new Error('connect ECONNREFUSED')
    // A minute to answer: a failure passed on only at the timeout would outlive the test.
    const result = await receiverWith({ store: { claim: () => Promise.reject(refused) }, claimTimeout: 60_000 }).verify(await delivery())
    expect(result.ok || result.error?.cause).toBe(refused)
  })

  it('refuses a dedupe.key that returns something other than text', async () => {
    const receiver = receiverWith({ key: () => 42 as never })
    await expect(receiver.verify(await delivery())).rejects.toThrow(TypeError)
  })

  it('lets a late answer that is not a claim be, and reports a late claim it cannot give back', async () => {
    const report = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      for (const late of [{ state: 'done' }, null, { state: 'processing', retryAfterMs: 1000 }]) {
        const receiver = receiverWith({
          store: { claim: () => new Promise<ClaimResult>((resolve) => setTimeout(() => resolve(late as ClaimResult), 30)) },
          claimTimeout: 10,
        })
        const result = await receiver.verify(await delivery())
        expect(result.ok || result.error?.code).toBe('store_unavailable')
        await new Promise((resolve) => setTimeout(resolve, 60))
      }
      expect(report).not.toHaveBeenCalled()

      const receiver = receiverWith({
        store: {
          claim: () =>
            new Promise<ClaimResult>((resolve) =>
              setTimeout(
                () =>
                  resolve({
                    state: 'claimed',
                    claim: {
                      complete: async () => {},
                      release: () => {
                        throw new Error('connection lost')
                      },
                    },
                  }),
                30,
              ),
            ),
        },
        claimTimeout: 10,
      })
      await receiver.verify(await delivery())
      await vi.waitFor(() => expect(report).toHaveBeenCalledTimes(1))
      expect(report.mock.calls[0]?.[0]).toBe(
        "@hookguard/core: a delivery's claim that came too late could not be released; it expires on its own.",
      )
    } finally {
      report.mockRestore()
    }
  })

  describe('the Retry-After of a duplicate in progress', () => {
    /** The 409's Retry-After for a duplicate `heldMs` after the first delivery claimed its key. */
    async function retryAfterWhenHeld(heldMs: number, processingTtl = 300): Promise<string | undefined> {
      let now = 1_700_000_000_000
      const receiver = receiverWith({ store: memoryDedupeStore({ clock: () => now }), processingTtl })
      const first = await receiver.verify(await delivery())
      if (!first.ok) throw new Error('expected the first delivery to be claimed')
      now += heldMs
      const duplicate = await receiver.verify(await delivery())
      return duplicate.ok ? undefined : duplicate.response.headers['retry-after']
    }

    it('is as long as the claim has been held, in whole seconds rounded up', async () => {
      expect(await retryAfterWhenHeld(1_200)).toBe('2')
      expect(await retryAfterWhenHeld(45_000)).toBe('45')
      expect(await retryAfterWhenHeld(120_001)).toBe('121')
    })

    it('is 1 s, not the whole processingTtl, for a claim just taken', async () => {
      expect(await retryAfterWhenHeld(0)).toBe('1')
      expect(await retryAfterWhenHeld(300)).toBe('1')
    })

    it('never points past the time the claim has left, after which a retry is handled', async () => {
      expect(await retryAfterWhenHeld(290_500)).toBe('10')
      expect(await retryAfterWhenHeld(299_999)).toBe('1')
      expect(await retryAfterWhenHeld(50_000, 60)).toBe('10')
    })

    it('counts a figure the store cannot vouch for (NaN, centuries, a longer TTL than ours) as a claim just taken', async () => {
      for (const retryAfterMs of [Number.NaN, Number.MAX_VALUE, Number.POSITIVE_INFINITY, 61_000]) {
        const store: DedupeStore = { claim: async () => ({ state: 'processing', retryAfterMs }) }
        const result = await receiverWith({ store, processingTtl: 60 }).verify(await delivery())
        expect(result.ok || result.response.headers['retry-after'], String(retryAfterMs)).toBe('1')
      }
    })

    it('follows what the store says is left', async () => {
      const store: DedupeStore = { claim: async () => ({ state: 'processing', retryAfterMs: 20_000 }) }
      const result = await receiverWith({ store, processingTtl: 60 }).verify(await delivery())
      expect(result.ok || result.response.headers['retry-after']).toBe('20')
    })
  })

  it('settles without rejecting, and within claimTimeout, whatever complete() and release() do', async () => {
    const report = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      for (const method of ['complete', 'release'] as const) {
        for (const behaviour of [
          () => {
            throw new Error('at once')
          },
          () => new Promise(() => {}),
          () => Promise.reject(new Error('later')),
        ]) {
          const receiver = receiverWith({ store: claimedWith({ [method]: behaviour }), claimTimeout: 50 })
          const result = await receiver.verify(await delivery())
          if (!result.ok || result.settle === undefined) throw new Error('expected a claimed delivery')
          const started = performance.now()
          await expect(result.settle(method === 'complete')).resolves.toBeUndefined()
          expect(performance.now() - started).toBeLessThan(2000)
        }
      }
      expect(report).toHaveBeenCalledTimes(6)
    } finally {
      report.mockRestore()
    }
  })
})
