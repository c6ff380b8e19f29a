import {
  createReceiver,
  type DedupeStore,
  DeliveryInProgressError,
  deliveryOfJob,
  type HandoffJob,
  type HandoffQueue,
  memoryDedupeStore,
  runOnce,
  sign,
} from '@hookguard/core'
import { wrappingClaims } from '@hookguard/testkit/claims'
import { CREDENTIAL_PLACES, expectNoPlacedCredential, PLACED_BASIC, sendEveryPlace } from '@hookguard/testkit/credentials'
import type { Outgoing } from '@hookguard/testkit/exchange'
import { afterEach, describe, expect, it, vi } from 'vitest'

const SECRET = 'whsec-handoff-core-8d1f'
const BODY = '{"event":"customer.created","data":{"id":884211,"name":"Ada Lovelace"}}'

function holdingQueue(): HandoffQueue & { jobs: HandoffJob[] } {
  const jobs: HandoffJob[] = []
  return {
    jobs,
    async enqueue(job) {
      const held = JSON.parse(JSON.stringify(job)) as HandoffJob
      const duplicate = jobs.some((existing) => existing.id === held.id)
      if (!duplicate) jobs.push(held)
      return { jobId: held.id, duplicate }
    },
  }
}

const FORM = 'application/x-www-form-urlencoded'

/**
 * A receiver in each mode handing off to `queue`, with what a sender authenticates with there, and
 * those credentials themselves (the secret, the signature's key, the token), which no job may hold.
 */
async function placedModes(queue: HandoffQueue) {
  const oauth = { mode: 'oauth2' as const, appId: 'app-placed', secret: 'oauth-placed-CANARY-secret-0c7' }
  const issued = await createReceiver({ auth: oauth }, { role: 'token' }).token({
    method: 'GET',
    url: `https://app.example/token?appid=${oauth.appId}&secret=${oauth.secret}&grant_type=client_credentials`,
    headers: {},
    body: null,
  })
  const token = (JSON.parse(issued.body) as { access_token: string }).access_token
  const authorization = `Basic ${btoa(`${PLACED_BASIC.username}:${PLACED_BASIC.password}`)}`
  const receivers = {
    none: createReceiver({ auth: { mode: 'none' }, handoff: { queue } }),
    basic: createReceiver({ auth: { mode: 'basic', ...PLACED_BASIC }, handoff: { queue } }),
    secret: createReceiver({ auth: { mode: 'secret', secret: SECRET }, handoff: { queue } }),
    oauth2: createReceiver({ auth: oauth, handoff: { queue } }),
  }
  const modes = [
    { credential: { mode: 'none' as const } },
    { credential: { mode: 'basic' as const, authorization } },
    { credential: { mode: 'secret' as const, sign: (body: string) => sign(body, SECRET) } },
    { credential: { mode: 'oauth2' as const, token } },
  ].map(({ credential }) => ({
    credential,
    send: ({ method = 'POST', path, headers = {}, body }: Outgoing) =>
      receivers[credential.mode].verify({ method, url: `https://app.example${path}`, headers, body: body ?? null }),
  }))
  return { modes, credentials: [SECRET, oauth.secret, token, authorization.slice('Basic '.length)] }
}

/** All a job holds, as text: its JSON and the bytes its base64 stands for. */
const jobText = (job: HandoffJob) => `${JSON.stringify(job)}\n${Buffer.from(job.rawBody, 'base64').toString('latin1')}`

const post = (body: string, headers: Record<string, string>, url = 'https://app.example/hooks') => ({
  method: 'POST',
  url,
  headers: { 'content-type': 'application/json', ...headers },
  body: new TextEncoder().encode(body),
})

describe('handoff: the job', () => {
  it('holds the same id for every whitespace variant of one signed delivery, and another for another delivery', async () => {
    const queue = holdingQueue()
    const receiver = createReceiver({ auth: { mode: 'secret', secret: SECRET }, handoff: { queue } })
    const signature = await sign(BODY, SECRET)
    const pretty = JSON.stringify(JSON.parse(BODY), null, 2)
    const first = await receiver.verify(post(BODY, { 'x-service-hmac-signature': signature }))
    expect(first.ok === false && first.response.status).toBe(202)
    const again = await receiver.verify(post(pretty, { 'x-service-hmac-signature': signature }))
    expect(again.ok === false && again.response.status).toBe(200)
    const other = '{"event":"customer.created","data":{"id":884212}}'
    await receiver.verify(post(other, { 'x-service-hmac-signature': await sign(other, SECRET) }))
    expect(queue.jobs.map((job) => job.id)).toHaveLength(2)
    expect(new Set(queue.jobs.map((job) => job.id)).size).toBe(2)
  })

  it('carries no credential: not the Basic password, not the OAuth token in the query, a header or a form field', async () => {
    const password = 'basic-pass-CANARY-1'
    const basic = holdingQueue()
    const basicReceiver = createReceiver({ auth: { mode: 'basic', username: 'svc', password }, handoff: { queue: basic } })
    const authorization = `Basic ${btoa(`svc:${password}`)}`
    await basicReceiver.verify(post(BODY, { authorization, cookie: 'sid=CANARY-cookie' }))
    expect(basic.jobs).toHaveLength(1)

    const oauth = holdingQueue()
    const auth = { mode: 'oauth2' as const, appId: 'app-1', secret: 'oauth-secret-CANARY-2-long-enough' }
    const issuing = createReceiver({ auth }, { role: 'token' })
    const issued = await issuing.token({
      method: 'GET',
      url: `https://app.example/token?appid=app-1&secret=${auth.secret}&grant_type=client_credentials`,
      headers: {},
      body: null,
    })
    const token = (JSON.parse(issued.body) as { access_token: string }).access_token
    const oauthReceiver = createReceiver({ auth, handoff: { queue: oauth } })
    await oauthReceiver.verify(post(BODY, {}, `https://app.example/hooks?access_token=${token}`))
    await oauthReceiver.verify(post('{"event":"other"}', { authorization: `Bearer ${token}` }))
    const form = `access_token=${encodeURIComponent(token)}&event=form.sent`
    await oauthReceiver.verify({ ...post(form, {}), headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(oauth.jobs).toHaveLength(3)
    const held = JSON.stringify([...basic.jobs, ...oauth.jobs])
    for (const secret of [password, btoa(`svc:${password}`), 'CANARY-cookie', auth.secret, token]) expect(held).not.toContain(secret)
    // The form's delivery is its fields without the token, as the handler would have seen it, and
    // so are the bytes the job keeps.
    expect(oauth.jobs[2]?.payload).toEqual({ event: 'form.sent' })
    expect(new TextDecoder().decode(Uint8Array.from(atob(oauth.jobs[2]?.rawBody ?? ''), (c) => c.charCodeAt(0)))).toBe('event=form.sent')
  })
})

describe('handoff: a credential a sender puts anywhere', () => {
  it('appears in no job, in any mode: not the place’s canary, not the mode’s own credential', async () => {
    const queue = holdingQueue()
    const { modes, credentials } = await placedModes(queue)
    await sendEveryPlace(modes)
    const inMode = (mode: string) => queue.jobs.filter((job) => job.mode === mode)
    // Modes none and secret queue every JSON delivery; basic all but the two whose own Authorization
    // (Bearer, no scheme) replaces the receiver's; oauth2 each form too, but for the two whose field
    // is a second access_token (one token in one place: refused, 400). Every other place reached a
    // job, so none is unchecked.
    const json = CREDENTIAL_PLACES.filter((place) => !place.request.path.startsWith('/token') && place.request.body === undefined)
    const forms = CREDENTIAL_PLACES.filter(
      (place) => place.request.body?.startsWith('event=ping&') && !/^form field access(_|%5F)token$/.test(place.name),
    )
    expect(inMode('none')).toHaveLength(json.length)
    expect(inMode('secret')).toHaveLength(json.length)
    expect(inMode('basic').length).toBe(json.length - 2)
    expect(inMode('oauth2').filter((job) => job.headers['content-type'] === FORM)).toHaveLength(forms.length)
    for (const job of queue.jobs)
      expectNoPlacedCredential(jobText(job), `the ${job.mode} job of ${job.headers['x-request-id']}`, credentials)
  })
})

describe('handoff: the receiver’s look at the store', () => {
  it('holds a claim it could not give back only for claimTimeout, so the service’s retry is queued, not told 409 for processingTtl', async () => {
    const memory = memoryDedupeStore()
    let connected = false
    // Redis gone between the look's claim and its release: the claim stays in the store.
    const store: DedupeStore = wrappingClaims(memory, (claim) => ({
      complete: (ms) => claim.complete(ms),
      release: async () => {
        if (!connected) throw new Error('connection lost')
        await claim.release()
      },
    }))
    const queue = holdingQueue()
    const receiver = createReceiver({ auth: { mode: 'secret', secret: SECRET }, handoff: { queue }, dedupe: { store, claimTimeout: 300 } })
    const request = post(BODY, { 'x-service-hmac-signature': await sign(BODY, SECRET) })
    const first = await receiver.verify(request)
    expect(first.ok === false && [first.response.status, first.error?.code]).toEqual([503, 'store_unavailable'])
    connected = true
    const soon = await receiver.verify(request)
    expect(soon.ok === false && soon.response.status).toBe(409)
    await new Promise((resolve) => setTimeout(resolve, 400))
    const later = await receiver.verify(request)
    expect(later.ok === false && later.response.status).toBe(202)
    expect(queue.jobs).toHaveLength(1)
  })
})

describe('handoff: runOnce, the worker side', () => {
  const jobFor = async (store?: DedupeStore): Promise<HandoffJob> => {
    const queue = holdingQueue()
    const receiver = createReceiver({
      auth: { mode: 'secret', secret: SECRET },
      handoff: { queue },
      ...(store && { dedupe: { store } }),
      clock: () => Date.UTC(2026, 10, 28, 12),
    })
    await receiver.verify(post(BODY, { 'x-service-hmac-signature': await sign(BODY, SECRET) }))
    return queue.jobs[0] as HandoffJob
  }

  it('hands the handler the delivery the receiver verified', async () => {
    const job = await jobFor()
    const outcome = await runOnce(job, (delivery) => delivery)
    expect(outcome.ran).toBe(true)
    const delivery = outcome.ran ? outcome.result : undefined
    expect(delivery?.payload).toEqual(JSON.parse(BODY))
    expect(new TextDecoder().decode(delivery?.rawBody)).toBe(BODY)
    expect(delivery?.receivedAt.toISOString()).toBe('2026-11-28T12:00:00.000Z')
    expect(delivery?.jobId).toBe(job.id)
  })

  it('with a store, runs a delivery that succeeded once, however often its job runs, and again after a failure', async () => {
    const store = memoryDedupeStore()
    const job = await jobFor(store)
    let runs = 0
    await expect(
      runOnce(
        job,
        () => {
          runs++
          throw new Error('database down')
        },
        { store },
      ),
    ).rejects.toThrow('database down')
    expect(await runOnce(job, () => ++runs, { store })).toEqual({ ran: true, result: 2 })
    expect(await runOnce(job, () => ++runs, { store })).toEqual({ ran: false, reason: 'done' })
    expect(runs).toBe(2)
  })

  /** `store`, whose done marks fail while `failing()` says so, each failure counted. */
  const unreachableAtDone = (store: DedupeStore, failing: () => boolean, error = () => new Error('connection lost')) => {
    const failed: number[] = []
    const wrapped: DedupeStore = wrappingClaims(store, (claim) => ({
      release: () => claim.release(),
      async complete(ms) {
        if (failing()) {
          failed.push(Date.now())
          throw error()
        }
        await claim.complete(ms)
      },
    }))
    return { store: wrapped, failed }
  }

  afterEach(() => {
    vi.useRealTimers()
  })

  it('marks a handled delivery done once the store is back within processingTtl, so its next run does not run the handler', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] })
    const shared = memoryDedupeStore()
    const away = Date.now() + 7_000
    const { store, failed } = unreachableAtDone(shared, () => Date.now() < away)
    const job = await jobFor(shared)
    let runs = 0
    const running = runOnce(job, () => ++runs, { store, processingTtl: 30 })
    await vi.advanceTimersByTimeAsync(10_000)
    expect(await running).toEqual({ ran: true, result: 1 })
    // Tried again with growing waits, at most a second apart, until the store answered.
    expect(failed.length).toBeGreaterThan(5)
    expect(failed.length).toBeLessThan(20)
    expect(await runOnce(job, () => ++runs, { store: shared })).toEqual({ ran: false, reason: 'done' })
    expect(runs).toBe(1)
  })

  it('gives the done mark up once the claim has expired, and at once for a TypeError, for the queue to retry', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] })
    const job = await jobFor(memoryDedupeStore())
    const gone = unreachableAtDone(memoryDedupeStore(), () => true)
    const began = Date.now()
    const running = runOnce(job, () => 'worked', { store: gone.store, processingTtl: 5 })
    const settled = running.catch((error: unknown) => error)
    await vi.advanceTimersByTimeAsync(6_000)
    expect(await settled).toEqual(new Error('connection lost'))
    expect((gone.failed.at(-1) ?? 0) - began).toBeLessThanOrEqual(5_000)
    expect((gone.failed.at(-1) ?? 0) - began).toBeGreaterThan(3_000)

    const refused = unreachableAtDone(
      memoryDedupeStore(),
      () => true,
      () => new TypeError('a TTL the store refuses'),
    )
    await expect(runOnce(job, () => 'worked', { store: refused.store })).rejects.toThrow(TypeError)
    expect(refused.failed).toHaveLength(1)
  })

  it('throws DeliveryInProgressError while another worker runs the same delivery', async () => {
    const store = memoryDedupeStore()
    const job = await jobFor(store)
    let inner: unknown
    await runOnce(
      job,
      async () => {
        inner = await runOnce(job, () => 'second', { store }).catch((error: unknown) => error)
      },
      { store },
    )
    expect(inner).toBeInstanceOf(DeliveryInProgressError)
    expect((inner as DeliveryInProgressError).retryAfterMs).toBeGreaterThan(0)
  })

  it('tells a worker that meets a receiver looking at the delivery to wait as long as a look can take, not processingTtl', async () => {
    const store = memoryDedupeStore()
    const held: number[] = []
    const slowRelease: DedupeStore = {
      async claim(key, ttlMs) {
        held.push(ttlMs)
        const found = await store.claim(key, ttlMs)
        if (found.state !== 'claimed') return found
        const { complete, release } = found.claim
        // The worker's claim comes while the receiver's look still holds the key.
        const releaseAfterMeeting = async () => {
          await meet()
          await release()
        }
        return { state: 'claimed', claim: { complete, release: releaseAfterMeeting } }
      },
    }
    let met: unknown
    const job = await jobFor(memoryDedupeStore())
    const meet = async () => {
      met ??= await runOnce(job, () => 'ran', { store }).catch((error: unknown) => error)
    }
    const queue = holdingQueue()
    const receiver = createReceiver({ auth: { mode: 'secret', secret: SECRET }, handoff: { queue }, dedupe: { store: slowRelease } })
    await receiver.verify(post(BODY, { 'x-service-hmac-signature': await sign(BODY, SECRET) }))
    // claimTimeout, 5 s by default: giving back an expired look is a no-op, so it need hold no longer.
    expect(held).toEqual([5_000])
    expect(met).toBeInstanceOf(DeliveryInProgressError)
    expect((met as DeliveryInProgressError).retryAfterMs).toBeLessThanOrEqual(5_000)
  })

  it('refuses a job hookguard did not queue', () => {
    for (const job of [null, {}, { id: 'x', key: 'k', mode: 'secret', fingerprint: 'f', rawBody: '%%%', receivedAt: 'now', headers: {} }]) {
      expect(() => deliveryOfJob(job as unknown as HandoffJob)).toThrow(TypeError)
    }
  })
})

describe('handoff: setup', () => {
  it('refuses a handoff without a queue, a status that is not 2xx, a timeout that is not a positive integer', () => {
    const auth = { mode: 'none' as const }
    const queue = holdingQueue()
    for (const handoff of [
      null,
      {},
      { queue: {} },
      { queue, status: 302 },
      { queue, status: 500 },
      { queue, timeout: 0 },
      { queue, timeout: 1.5 },
      { queue, timeout: 2 ** 31 },
    ]) {
      expect(() => createReceiver({ auth, handoff: handoff as never })).toThrow(/^@hookguard\/core: handoff/)
    }
    expect(() => createReceiver({ auth, handoff: { queue, status: 200, timeout: 100 } })).not.toThrow()
  })

  it('takes the queue’s body limit as maxBodySize, refuses a larger one at setup, and answers a larger body 413 before queueing it', async () => {
    const jobs: HandoffJob[] = []
    const queue = {
      maxBodySize: 64,
      async enqueue(job: HandoffJob) {
        jobs.push(job)
        return { jobId: job.id, duplicate: false }
      },
    }
    const auth = { mode: 'secret' as const, secret: SECRET }
    expect(() => createReceiver({ auth, handoff: { queue }, maxBodySize: 65 })).toThrow(
      /^@hookguard\/core: maxBodySize \(65 bytes\) is more than the hand-off's queue can carry \(64 bytes\)/,
    )
    expect(() => createReceiver({ auth, handoff: { queue: { ...queue, maxBodySize: 0 } } })).toThrow(/handoff\.queue\.maxBodySize/)
    const receiver = createReceiver({ auth, handoff: { queue } })
    const big = JSON.stringify({ event: 'x', pad: 'a'.repeat(60) })
    const refused = await receiver.verify(post(big, { 'x-service-hmac-signature': await sign(big, SECRET) }))
    expect(refused.ok === false && refused.response.status).toBe(413)
    const small = '{"event":"x"}'
    const queued = await receiver.verify(post(small, { 'x-service-hmac-signature': await sign(small, SECRET) }))
    expect(queued.ok === false && queued.response.status).toBe(202)
    // A smaller limit of the app's own is kept.
    const stricter = createReceiver({ auth, handoff: { queue }, maxBodySize: 16 })
    const mid = await stricter.verify(
      post('{"event":"abcdefghij"}', { 'x-service-hmac-signature': await sign('{"event":"abcdefghij"}', SECRET) }),
    )
    expect(mid.ok === false && mid.response.status).toBe(413)
    expect(jobs).toHaveLength(1)
  })
})
