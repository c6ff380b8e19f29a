import {
  type DedupeStore,
  type HandoffJob,
  type HandoffQueue,
  memoryDedupeStore,
  runOnce,
  sign,
  type WebhookEvent,
  type WebhookOptions,
} from '@hookguard/core'
import { afterEach, describe, expect, it } from 'vitest'
import { factories } from '../support/apps.ts'

// The hand-off through every adapter: the core decides, each adapter only writes the answer. The
// queue here keeps jobs in an array and does what a real one does with a job id it already holds;
// the real queues (BullMQ on redis-server, Cloudflare Queues in workerd) are tested in their packages.

const SECRET = 'whsec-handoff-51c9e2'
const EVENT = '{"event":"order.paid","data":{"orderNo":"SO-7731","note":"two words"}}'

/** A queue that holds jobs by id, or one that fails (`down`), or never answers (`stuck`). */
function arrayQueue(state: 'up' | 'down' | 'stuck' = 'up'): HandoffQueue & { jobs: HandoffJob[]; state: typeof state } {
  const jobs: HandoffJob[] = []
  const queue = {
    jobs,
    state,
    async enqueue(job: HandoffJob) {
      if (queue.state === 'down') throw new Error('connect ECONNREFUSED 127.0.0.1:6379')
      if (queue.state === 'stuck') return new Promise<never>(() => {})
      // As a queue carries it: through JSON.
      const held = JSON.parse(JSON.stringify(job)) as HandoffJob
      if (jobs.some((existing) => existing.id === held.id)) return { jobId: held.id, duplicate: true }
      jobs.push(held)
      return { jobId: held.id, duplicate: false }
    },
  }
  return queue
}

const signed = async (body: string, headers: Record<string, string> = {}) => ({
  path: '/hooks',
  headers: { 'content-type': 'application/json', 'x-service-hmac-signature': await sign(body, SECRET), ...headers },
  body,
})

describe.each(factories)('$name: handoff', (factory) => {
  const started: { close(): Promise<void> }[] = []
  afterEach(async () => {
    await Promise.all(started.splice(0).map((app) => app.close()))
  })
  const start = async (options: WebhookOptions) => {
    const app = await factory.start(options)
    started.push(app)
    return app
  }

  it('answers 202 once the queue holds the job, and the route handler does not run', async () => {
    const queue = arrayQueue()
    const events: WebhookEvent[] = []
    const app = await start({ auth: { mode: 'secret', secret: SECRET }, handoff: { queue }, onEvent: (event) => events.push(event) })
    const reply = await app.send(await signed(EVENT, { 'x-request-id': 'req-1', cookie: 'session=s3cr3t' }))
    expect(reply.status).toBe(202)
    expect(app.handled()).toBe(0)
    expect(queue.jobs).toHaveLength(1)
    const [job] = queue.jobs as [HandoffJob]
    expect(JSON.parse(reply.text)).toEqual({ queued: true, jobId: job.id })
    expect(job.id).toMatch(/^hg-[0-9a-f]{64}$/)
    expect(job.name).toBe('order.paid')
    expect(job.mode).toBe('secret')
    expect(job.payload).toEqual(JSON.parse(EVENT))
    expect(Buffer.from(job.rawBody, 'base64').toString()).toBe(EVENT)
    expect(job.headers).toEqual({ 'content-type': 'application/json', 'x-request-id': 'req-1' })
    expect(events.map((event) => event.type)).toEqual(['verified', 'queued'])
    expect(events[1]).toMatchObject({ type: 'queued', jobId: job.id, fingerprint: job.fingerprint })
  })

  it('answers a copy whose job is still queued as a duplicate, with no second job', async () => {
    const queue = arrayQueue()
    const app = await start({ auth: { mode: 'secret', secret: SECRET }, handoff: { queue } })
    // The service's retry of one delivery: the same text, whitespace and all.
    expect((await app.send(await signed(EVENT))).status).toBe(202)
    const copy = await app.send(await signed(EVENT))
    expect(copy.status).toBe(200)
    expect(JSON.parse(copy.text)).toMatchObject({ duplicate: true })
    expect(queue.jobs).toHaveLength(1)
  })

  it('answers 503 queue_unavailable, never 2xx, when the queue fails or does not answer', async () => {
    for (const state of ['down', 'stuck'] as const) {
      const queue = arrayQueue(state)
      const app = await start({ auth: { mode: 'secret', secret: SECRET }, handoff: { queue, timeout: 200 } })
      const reply = await app.send(await signed(EVENT))
      expect(reply.status).toBe(503)
      expect(JSON.parse(reply.text)).toMatchObject({ error: 'queue_unavailable' })
      expect(reply.headers['retry-after']).toBe('5')
      expect(reply.text).not.toContain('6379')
      expect(app.handled()).toBe(0)
      // The service's retry, once the queue is back, is queued.
      queue.state = 'up'
      expect((await app.send(await signed(EVENT))).status).toBe(202)
    }
  })

  it('queues nothing that fails authentication, its size limit or its schema', async () => {
    const queue = arrayQueue()
    const schema = {
      '~standard': {
        version: 1 as const,
        vendor: 'test',
        validate: (value: unknown) =>
          typeof (value as { data?: { amount?: unknown } }).data?.amount === 'number'
            ? { value }
            : { issues: [{ message: 'amount is required', path: ['data', 'amount'] }] },
      },
    }
    const app = await start({ auth: { mode: 'secret', secret: SECRET }, handoff: { queue }, schema, maxBodySize: 1024 })
    expect((await app.send({ ...(await signed(EVENT)), headers: { 'content-type': 'application/json' } })).status).toBe(401)
    expect((await app.send({ ...(await signed(EVENT)), body: EVENT.replace('SO-7731', 'SO-7732') })).status).toBe(401)
    const big = JSON.stringify({ event: 'x', pad: 'a'.repeat(2000) })
    expect((await app.send(await signed(big))).status).toBe(413)
    const refused = await app.send(await signed(EVENT))
    expect(refused.status).toBe(422)
    expect(queue.jobs).toHaveLength(0)
    expect(app.handled()).toBe(0)
  })

  it('with dedupe, answers a delivery a worker already handled as a duplicate, and one a worker is running with 409', async () => {
    const queue = arrayQueue()
    const store: DedupeStore = memoryDedupeStore()
    const app = await start({ auth: { mode: 'secret', secret: SECRET }, handoff: { queue }, dedupe: { store } })
    expect((await app.send(await signed(EVENT))).status).toBe(202)
    const [job] = queue.jobs as [HandoffJob]
    // The receiver only looked: the worker can claim the key.
    let duringRun: number | undefined
    const outcome = await runOnce(
      job,
      async () => {
        duringRun = (await app.send(await signed(EVENT))).status
        return 'done'
      },
      { store },
    )
    expect(outcome).toEqual({ ran: true, result: 'done' })
    expect(duringRun).toBe(409)
    // The job is gone from the queue (completed and removed); the service retries once more.
    queue.jobs.length = 0
    const late = await app.send(await signed(EVENT))
    expect(late.status).toBe(200)
    expect(JSON.parse(late.text)).toMatchObject({ duplicate: true })
    expect(queue.jobs).toHaveLength(0)
  })
})
