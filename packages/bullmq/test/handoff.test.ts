import { randomUUID } from 'node:crypto'
import { createReceiver, type HandoffJob, type QueuedDelivery, type StandardSchemaV1, sign, WebhookError } from '@hookguard/core'
import { redisDedupeStore } from '@hookguard/redis'
import { expectNoPlacedCredential, sendEveryPlace } from '@hookguard/testkit/credentials'
import type { Outgoing } from '@hookguard/testkit/exchange'
import { type RedisServer, startRedis } from '@hookguard/testkit/redis-server'
import type { Job, Queue, Worker } from 'bullmq'
import fc from 'fast-check'
import type { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createWorker, DEFAULT_JOB_OPTIONS, type DeadLetter, type HandoffJobOptions, handoff } from '../src/index.ts'
import { closeQueue, receiverApp, SECRET, signed, uniqueQueue, until, workerConnection } from './support.ts'

// The hand-off on a real BullMQ queue over a real redis-server, through a real Express app; the
// worker in this process. The same under faults, with worker and receiver processes: faults.test.ts.

const EVENT = '{"event":"order.paid","data":{"orderNo":"SO-7731","note":"two  spaces"}}'
const JSON_HEADERS = { 'content-type': 'application/json' }

/** Accepts `{ data: { amount: number } }`, refuses the rest: a schema as any Standard Schema library makes it. */
const amountSchema: StandardSchemaV1<unknown, { event: string; data: { amount: number } }> = {
  '~standard': {
    version: 1,
    vendor: 'test',
    validate: (value: unknown) =>
      typeof (value as { data?: { amount?: unknown } }).data?.amount === 'number'
        ? { value: value as { event: string; data: { amount: number } } }
        : { issues: [{ message: 'amount is required', path: ['data', 'amount'] }] },
  },
}

/** A job as the core makes one, of an empty delivery whose id repeats `pair`: for enqueues of one delivery at once. */
const bareJob = (pair: string): HandoffJob => ({
  id: `hg-${pair.repeat(32)}`,
  key: 'k',
  name: 'order.paid',
  mode: 'secret',
  payload: {},
  rawBody: 'e30=',
  fingerprint: 'f',
  receivedAt: new Date().toISOString(),
  headers: {},
})

let server: RedisServer
const queues: Queue[] = []
const workers: Worker[] = []
const connections: Redis[] = []
beforeAll(async () => {
  server = await startRedis()
})
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.close(true)))
  await Promise.all(queues.splice(0).map(closeQueue))
  for (const connection of connections.splice(0)) connection.disconnect()
})
afterAll(async () => {
  await server?.stop().catch(() => {})
})

const queue = (name?: string) => {
  const made = uniqueQueue(server.url, name)
  queues.push(made)
  return made
}
const connection = () => {
  const made = workerConnection(server.url)
  connections.push(made)
  return made
}
const worker = (...args: Parameters<typeof createWorker>) => {
  const made = createWorker(...args)
  made.on('error', () => {})
  workers.push(made)
  return made
}
const started: { close(): Promise<void> }[] = []
afterEach(async () => {
  await Promise.all(started.splice(0).map((app) => app.close()))
})
const app = async (options: Parameters<typeof receiverApp>[0]) => {
  const made = await receiverApp(options)
  started.push(made)
  return made
}

describe('handoff() through an Express receiver', () => {
  it('answers 202 once the job is in Redis, and a worker runs the handler once with the exact payload and bytes', async () => {
    const jobs = queue()
    const receiver = await app({ auth: { mode: 'secret', secret: SECRET }, handoff: handoff(jobs) })
    const reply = await receiver.send(await signed(EVENT, { 'x-request-id': 'req-9' }))
    expect(reply.status).toBe(202)
    const { jobId } = JSON.parse(reply.text) as { jobId: string }
    expect(jobId).toMatch(/^hg-[0-9a-f]{64}$/)
    const job = (await jobs.getJob(jobId)) as Job<HandoffJob>
    // Named by its event, so a dashboard lists deliveries by what they are.
    expect(job.name).toBe('order.paid')
    expect(job.opts).toMatchObject({ attempts: 5, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: { age: 86_400 } })
    expect(await job.getState()).toBe('waiting')

    const seen: QueuedDelivery[] = []
    const done = new Promise<void>((resolve) => {
      worker(
        jobs,
        (delivery) => {
          seen.push(delivery)
          return 'handled'
        },
        { connection: connection() },
      ).on('completed', () => resolve())
    })
    await done
    expect(seen).toHaveLength(1)
    const [delivery] = seen as [QueuedDelivery]
    expect(delivery.payload).toEqual(JSON.parse(EVENT))
    expect(Buffer.from(delivery.rawBody).toString()).toBe(EVENT)
    expect(delivery.jobId).toBe(jobId)
    expect(delivery.headers).toEqual({ 'content-type': 'application/json', 'x-request-id': 'req-9' })
    expect((await jobs.getJob(jobId))?.returnvalue).toEqual({ ran: true, result: 'handled' })
    expect(receiver.routeRuns()).toBe(0)
  })

  it('answers a copy that arrives while the job waits as a duplicate, with one job in the queue', async () => {
    const jobs = queue()
    const receiver = await app({ auth: { mode: 'secret', secret: SECRET }, handoff: handoff(jobs) })
    const first = await receiver.send(await signed(EVENT))
    const copies = await Promise.all([1, 2, 3].map(async () => receiver.send(await signed(EVENT))))
    expect(first.status).toBe(202)
    for (const copy of copies) {
      expect(copy.status).toBe(200)
      expect(JSON.parse(copy.text)).toMatchObject({ duplicate: true })
    }
    expect(await jobs.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed')).toMatchObject({ waiting: 1 })
  })

  it('tells truthfully which of many simultaneous enqueues of one delivery added its job, over separate connections', async () => {
    const name = `hooks-race-${Date.now()}`
    const job = bareJob('ab')
    // Twelve receivers at once, each over its own connection, as twelve processes would.
    const answers = await Promise.all(Array.from({ length: 12 }, () => handoff(queue(name)).queue.enqueue(job)))
    expect(answers.filter((answer) => !answer.duplicate)).toHaveLength(1)
    expect(new Set(answers.map((answer) => answer.jobId))).toEqual(new Set([job.id]))
    expect(await queues[0]?.getJobCounts('waiting')).toEqual({ waiting: 1 })
  })

  it('tells it truthfully when Redis holds the inserts while it goes on answering reads', async () => {
    const name = `hooks-paused-${Date.now()}`
    const job = bareJob('cd')
    const receivers = Array.from({ length: 6 }, () => queue(name))
    await Promise.all(receivers.map((each) => each.waitUntilReady()))
    // Writes, scripts among them, wait; reads do not. A read sent before its insert would find
    // no job in every receiver and each would call itself the first.
    await connection().call('CLIENT', 'PAUSE', '300', 'WRITE')
    const answers = await Promise.all(receivers.map((each) => handoff(each).queue.enqueue(job)))
    expect(answers.filter((answer) => !answer.duplicate)).toHaveLength(1)
    expect(await receivers[0]?.getJobCounts('waiting')).toEqual({ waiting: 1 })
  })

  it('lets the queue’s defaultJobOptions and jobOptions win over the defaults, but never the job id', async () => {
    const jobs = queue()
    const receiver = await app({
      auth: { mode: 'secret', secret: SECRET },
      handoff: handoff(jobs, { status: 200, jobOptions: { attempts: 2, jobId: 'mine' } as never }),
    })
    const reply = await receiver.send(await signed(EVENT))
    expect(reply.status).toBe(200)
    const job = await jobs.getJob((JSON.parse(reply.text) as { jobId: string }).jobId)
    expect(job?.id).toMatch(/^hg-/)
    expect(job?.opts.attempts).toBe(2)
    expect(job?.opts.backoff).toEqual(DEFAULT_JOB_OPTIONS.backoff)
  })

  it('queues delayed and prioritised jobs too, each copy after the first a duplicate', async () => {
    for (const [jobOptions, state] of [
      [{ delay: 60_000 }, 'delayed'],
      [{ priority: 3 }, 'prioritized'],
    ] as const) {
      const jobs = queue()
      const receiver = await app({ auth: { mode: 'secret', secret: SECRET }, handoff: handoff(jobs, { jobOptions }) })
      const delivery = await signed(EVENT)
      const first = await receiver.send(delivery)
      const copy = await receiver.send(delivery)
      expect([first.status, copy.status], state).toEqual([202, 200])
      expect(JSON.parse(copy.text)).toMatchObject({ duplicate: true })
      expect(await jobs.getJobCounts(state), state).toEqual({ [state]: 1 })
    }
  })

  it('answers 503 queue_unavailable, and queues nothing, for a job BullMQ refuses', async () => {
    const jobs = queue()
    // BullMQ takes priorities up to 2 097 152 and throws before sending anything to Redis.
    const receiver = await app({
      auth: { mode: 'secret', secret: SECRET },
      handoff: handoff(jobs, { jobOptions: { priority: 3_000_000 } }),
    })
    const reply = await receiver.send(await signed(EVENT))
    expect(reply.status).toBe(503)
    expect(JSON.parse(reply.text)).toMatchObject({ error: 'queue_unavailable' })
    const counts = await jobs.getJobCounts()
    expect(Object.values(counts).reduce((sum, count) => sum + count, 0)).toBe(0)
  })

  it('queues nothing that fails authentication, the size limit or the schema: 401, 413, 422', async () => {
    const jobs = queue()
    const receiver = await app({
      auth: { mode: 'secret', secret: SECRET },
      handoff: handoff(jobs),
      schema: amountSchema,
      maxBodySize: 1024,
    })
    const good = '{"event":"order.paid","data":{"amount":5}}'
    expect((await receiver.send({ ...(await signed(good)), headers: { 'content-type': 'application/json' } })).status).toBe(401)
    expect((await receiver.send({ ...(await signed(good)), body: good.replace('5', '6') })).status).toBe(401)
    expect((await receiver.send(await signed(JSON.stringify({ event: 'x', pad: 'a'.repeat(2000), data: { amount: 1 } })))).status).toBe(413)
    const refused = await receiver.send(await signed('{"event":"order.paid","data":{}}'))
    expect(refused.status).toBe(422)
    expect(JSON.parse(refused.text)).toMatchObject({ error: 'invalid_payload' })
    const counts = await jobs.getJobCounts()
    expect(Object.values(counts).reduce((sum, count) => sum + count, 0)).toBe(0)
    // And the route works: a good one is queued.
    expect((await receiver.send(await signed(good))).status).toBe(202)
    expect(await jobs.getJobCounts('waiting')).toEqual({ waiting: 1 })
  })

  it('refuses a setup that is no BullMQ queue', () => {
    expect(() => handoff({} as Queue)).toThrow(/^@hookguard\/bullmq: handoff\(queue\) needs a BullMQ Queue/)
  })
})

describe('createWorker', () => {
  const deadLetters = async (dead: Queue) => (await dead.getJobs(['waiting'])).map((job) => job.data as DeadLetter)

  it('dead-letters at once, without retrying, a job whose payload the schema refuses and a job that is no delivery', async () => {
    const jobs = queue()
    const dead = queue()
    const receiver = await app({ auth: { mode: 'secret', secret: SECRET }, handoff: handoff(jobs) })
    // Queued by a receiver without the schema (an older release): the worker's schema refuses it.
    expect((await receiver.send(await signed(EVENT))).status).toBe(202)
    await jobs.add('by-hand', { not: 'a delivery' }, { attempts: 5, jobId: 'by-hand-1' })
    let runs = 0
    const failed: string[] = []
    const typed = createWorker(
      jobs,
      (delivery) => {
        runs += 1
        return delivery.payload.data.amount
      },
      { connection: connection(), schema: amountSchema, deadLetter: dead },
    )
    workers.push(typed)
    typed.on('failed', (job) => failed.push(job?.id ?? ''))
    const letters = await until(async () => {
      const found = await deadLetters(dead)
      return found.length === 2 ? found : undefined
    }, 'two dead letters')
    // The worker writes the dead letter before BullMQ moves its job to failed and says so: on a
    // loaded machine the second letter is found before the second 'failed'.
    await until(async () => (failed.length >= 2 ? true : undefined), "both jobs' failed events")
    expect(runs).toBe(0)
    expect(failed).toHaveLength(2)
    const byQueue = Object.fromEntries(letters.map((letter) => [letter.jobId, letter]))
    expect(byQueue['by-hand-1']).toMatchObject({ job: { not: 'a delivery' }, attempts: 1, queue: jobs.name })
    const refused = letters.find((letter) => letter.jobId !== 'by-hand-1') as DeadLetter
    expect(refused).toMatchObject({ attempts: 1, error: expect.stringContaining('data.amount') })
    expect((refused.job as HandoffJob).payload).toEqual(JSON.parse(EVENT))
    for (const id of ['by-hand-1', refused.jobId ?? '']) {
      const job = await jobs.getJob(id)
      expect(await job?.getState()).toBe('failed')
      expect(job?.attemptsMade).toBe(1)
    }
  })

  it('dead-letters refused and failed jobs with no credential a sender put anywhere, in modes none and oauth2', async () => {
    const jobs = queue()
    const dead = queue()
    const oauth = { mode: 'oauth2' as const, appId: 'app-dead', secret: 'oauth-dead-letter-CANARY-4b1e' }
    const issued = await createReceiver({ auth: oauth }, { role: 'token' }).token({
      method: 'GET',
      url: `https://app.example/token?appid=${oauth.appId}&secret=${oauth.secret}&grant_type=client_credentials`,
      headers: {},
      body: null,
    })
    const token = (JSON.parse(issued.body) as { access_token: string }).access_token
    // One attempt: a handler that fails is dead-lettered at once, as after its last.
    const handing = handoff(jobs, { jobOptions: { attempts: 1 } })
    const receivers = {
      none: createReceiver({ auth: { mode: 'none' }, handoff: handing }),
      oauth2: createReceiver({ auth: oauth, handoff: handing }),
    }
    const modes = [{ mode: 'none' as const }, { mode: 'oauth2' as const, token }].map((credential) => ({
      credential,
      send: ({ method = 'POST', path, headers = {}, body }: Outgoing) =>
        receivers[credential.mode].verify({ method, url: `https://app.example${path}`, headers, body: body ?? null }),
    }))
    await sendEveryPlace(modes)
    const queued = await jobs.count()
    expect(queued).toBeGreaterThan(10)
    // The JSON deliveries are poison (the worker's schema refuses them); the forms fail in the handler.
    const noJsonData: StandardSchemaV1<unknown, unknown> = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: (value: unknown) =>
          typeof (value as { data?: unknown }).data === 'object' ? { issues: [{ message: 'data is refused', path: ['data'] }] } : { value },
      },
    }
    worker(
      jobs,
      (delivery) => {
        throw new Error(`the handler failed on ${delivery.headers['x-request-id']}`)
      },
      { connection: connection(), schema: noJsonData, deadLetter: dead },
    )
    const letters = await until(async () => {
      const found = await deadLetters(dead)
      return found.length === queued ? found : undefined
    }, `${queued} dead letters`)
    expect(new Set(letters.map((letter) => letter.error.startsWith('the handler failed')))).toEqual(new Set([true, false]))
    for (const letter of letters) {
      const job = letter.job as HandoffJob
      const text = `${JSON.stringify(letter)}\n${Buffer.from(job.rawBody, 'base64').toString('latin1')}`
      expectNoPlacedCredential(text, `the dead letter of ${job.mode} ${job.headers['x-request-id']}`, [oauth.secret, token])
    }
  })

  it('runs a delivery once across two jobs of it, through the dedupe store', async () => {
    const jobs = queue()
    const store = redisDedupeStore(connection(), { prefix: `hg-test-${jobs.name}:` })
    const receiver = await app({ auth: { mode: 'secret', secret: SECRET }, handoff: handoff(jobs), dedupe: { store } })
    const { jobId } = JSON.parse((await receiver.send(await signed(EVENT))).text) as { jobId: string }
    let runs = 0
    const outcomes: unknown[] = []
    const completed = (count: number) => until(async () => (outcomes.length >= count ? true : undefined), `${count} completed jobs`, 10_000)
    worker(
      jobs,
      () => {
        runs += 1
      },
      { connection: connection(), store },
    ).on('completed', (_job, outcome) => outcomes.push(outcome))
    await completed(1)
    // The job gone (removed by hand, as an age limit would), the same delivery queued again by hand.
    const job = (await jobs.getJob(jobId)) as Job<HandoffJob>
    await job.remove()
    await jobs.add(job.name, job.data, { jobId })
    await completed(2)
    expect(runs).toBe(1)
    expect(outcomes).toEqual([{ ran: true }, { ran: false, reason: 'done' }])
    // A copy that arrives after the job is gone is answered from the store, not queued again.
    const copy = await receiver.send(await signed(EVENT))
    expect(copy.status).toBe(200)
    expect(JSON.parse(copy.text)).toMatchObject({ duplicate: true })
  })

  it('delays a job while another worker holds its delivery, without using an attempt', async () => {
    const jobs = queue()
    const store = redisDedupeStore(connection(), { prefix: `hg-test-${jobs.name}:` })
    const receiver = await app({ auth: { mode: 'secret', secret: SECRET }, handoff: handoff(jobs, { jobOptions: { attempts: 1 } }) })
    const { jobId } = JSON.parse((await receiver.send(await signed(EVENT))).text) as { jobId: string }
    const job = (await jobs.getJob(jobId)) as Job<HandoffJob>
    // Another worker's claim, as one that died mid-job leaves it: held for 1.5 s.
    const held = await store.claim(job.data.key, 1_500)
    expect(held.state).toBe('claimed')
    let ranAt = 0
    const began = Date.now()
    worker(
      jobs,
      () => {
        ranAt = Date.now()
      },
      { connection: connection(), store },
    )
    await until(async () => ((await jobs.getJob(jobId))?.finishedOn ? true : undefined), 'the job to finish')
    const finished = (await jobs.getJob(jobId)) as Job
    expect(await finished.getState()).toBe('completed')
    // One attempt allowed, and not used by the wait.
    expect(finished.attemptsMade).toBe(1)
    expect(ranAt - began).toBeGreaterThanOrEqual(1_000)
  })

  it('runs a job soon after a brief hold of its delivery ends, not when the hold would expire', async () => {
    const jobs = queue()
    const store = redisDedupeStore(connection(), { prefix: `hg-test-${jobs.name}:` })
    const receiver = await app({ auth: { mode: 'secret', secret: SECRET }, handoff: handoff(jobs) })
    const { jobId } = JSON.parse((await receiver.send(await signed(EVENT))).text) as { jobId: string }
    const job = (await jobs.getJob(jobId)) as Job<HandoffJob>
    // A receiver's look at the store as a copy arrives: claimed for claimTimeout (5 s), given back at once.
    const look = await store.claim(job.data.key, 5_000)
    if (look.state !== 'claimed') throw new Error('the look did not claim')
    let ranAt = 0
    const began = Date.now()
    worker(
      jobs,
      () => {
        ranAt = Date.now()
      },
      { connection: connection(), store },
    )
    await new Promise((resolve) => setTimeout(resolve, 300))
    await look.claim.release()
    await until(async () => (ranAt > 0 ? true : undefined), 'the handler to run')
    expect(ranAt - began).toBeLessThan(3_000)
  })

  describe("what unauthenticated deliveries leave in Redis (mode 'none', where anyone can queue)", () => {
    const DELIVERIES = 40
    /** Sends `count` distinct deliveries through a receiver in mode none, and lets a worker complete them. */
    async function flood(jobs: Queue, jobOptions?: HandoffJobOptions) {
      const receiver = createReceiver({ auth: { mode: 'none' }, handoff: handoff(jobs, jobOptions && { jobOptions }) })
      for (let i = 0; i < DELIVERIES; i++) {
        const body = JSON.stringify({ event: 'flood', data: { i, pad: 'x'.repeat(512) } })
        const answer = await receiver.verify({ method: 'POST', url: 'https://app.example/hooks', headers: JSON_HEADERS, body })
        expect(answer.ok === false && answer.response.status).toBe(202)
      }
      let done = 0
      worker(jobs, () => {}, { connection: connection(), concurrency: 8 }).on('completed', () => {
        done += 1
      })
      await until(async () => (done === DELIVERIES ? true : undefined), `${DELIVERIES} jobs completed`, 10_000)
      // The keys of the queue's jobs (each job a hash of its own), as Redis holds them.
      const keys = await connection().keys(`bull:${jobs.name}:hg-*`)
      return { completed: await jobs.getCompletedCount(), keys: keys.length }
    }

    it('keeps every completed job by default, bounded by age only (24 h): one kept job per delivery', async () => {
      expect(await flood(queue())).toEqual({ completed: DELIVERIES, keys: DELIVERIES })
    })

    it('lets the waiting jobs, which no removal option bounds, grow only to Redis’s maxmemory: then 503, and no job queued before is lost', async () => {
      const own = await startRedis({ own: true })
      const admin = workerConnection(own.url)
      const jobs = uniqueQueue(own.url)
      try {
        await jobs.waitUntilReady()
        await admin.config('SET', 'maxmemory-policy', 'noeviction')
        await admin.config('SET', 'maxmemory', String(3 * 1024 * 1024))
        // No worker: a sender faster than the workers.
        const receiver = createReceiver({ auth: { mode: 'none' }, handoff: handoff(jobs) })
        const statuses: number[] = []
        for (let i = 0; i < 120; i++) {
          const body = JSON.stringify({ event: 'flood', data: { i, pad: 'x'.repeat(16 * 1024) } })
          const answer = await receiver.verify({ method: 'POST', url: 'https://app.example/hooks', headers: JSON_HEADERS, body })
          statuses.push(answer.ok ? 200 : answer.response.status)
        }
        const queued = statuses.filter((status) => status === 202).length
        expect(new Set(statuses)).toEqual(new Set([202, 503]))
        expect(await jobs.getWaitingCount()).toBe(queued)
      } finally {
        await closeQueue(jobs)
        admin.disconnect()
        await own.stop()
      }
    })

    it('keeps at most the count removeOnComplete names, however many deliveries arrive', async () => {
      const bound = 5
      const { completed, keys } = await flood(queue(), { removeOnComplete: { age: 86_400, count: bound } })
      expect(completed).toBeLessThanOrEqual(bound)
      expect(keys).toBeLessThanOrEqual(bound)
    })
  })

  it('refuses bad options at setup', () => {
    expect(() => createWorker('q', (() => {}) as never, { connection: connection(), ttl: 0 })).toThrow(
      /^@hookguard\/bullmq: createWorker ttl/,
    )
    expect(() => createWorker('q', 'handler' as never, { connection: connection() })).toThrow(/needs a handler function/)
  })

  it('keeps an invalid_payload thrown by the handler itself retryable', async () => {
    const jobs = queue()
    const receiver = await app({
      auth: { mode: 'secret', secret: SECRET },
      handoff: handoff(jobs, { jobOptions: { attempts: 2, backoff: { type: 'fixed', delay: 10 } } }),
    })
    await receiver.send(await signed(EVENT))
    let runs = 0
    worker(
      jobs,
      () => {
        runs += 1
        if (runs === 1) throw new WebhookError('invalid_payload', 'the handler’s own check')
      },
      { connection: connection() },
    )
    await until(async () => ((await jobs.getJobCounts('completed')).completed === 1 ? true : undefined), 'the job to complete')
    expect(runs).toBe(2)
  })
})

// The fault property of docs/handoff.md's "What once means", in this process and on this file's
// redis-server, in a few seconds: a bounded number of seeded schedules; the worker processes,
// Redis restarts and three receiver processes are faults.test.ts's.
describe('each delivery once, under faults at random points (seeded)', () => {
  /** Deliveries, each sent in copies and failing its first attempts; Redis paused for writes a while; the worker closed mid-job. */
  const schedules = fc.record({
    deliveries: fc.array(fc.record({ copies: fc.integer({ min: 1, max: 3 }), failTimes: fc.integer({ min: 0, max: 2 }) }), {
      minLength: 2,
      maxLength: 5,
    }),
    pause: fc.option(fc.record({ afterMs: fc.integer({ min: 0, max: 40 }), forMs: fc.integer({ min: 100, max: 400 }) }), {
      nil: undefined,
    }),
    closeMidJob: fc.option(fc.nat(), { nil: undefined }),
  })
  type Schedule = typeof schedules extends fc.Arbitrary<infer T> ? T : never

  async function play({ deliveries, pause, closeMidJob }: Schedule): Promise<void> {
    const name = `hooks-faults-${randomUUID().slice(0, 8)}`
    const jobs = queue(name)
    const store = redisDedupeStore(connection(), { prefix: `${name}:dedupe:` })
    // Two receivers over connections of their own, as two processes; a short timeout, so that a pause answers 503.
    const receivers = [queue(name), queue(name)].map((each) =>
      createReceiver({
        auth: { mode: 'secret', secret: SECRET },
        handoff: handoff(each, { timeout: 250, jobOptions: { attempts: 4, backoff: { type: 'fixed', delay: 20 } } }),
      }),
    )
    const ids = deliveries.map((_, at) => `d-${at}`)
    const held = closeMidJob === undefined ? undefined : ids[closeMidJob % ids.length]
    const attempts = new Map<string, number>()
    const successes = new Map<string, number>()
    let started: () => void = () => {}
    const holdStarted = new Promise<void>((resolve) => {
      started = resolve
    })
    let letGo: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      letGo = resolve
    })
    const handler = async (delivery: QueuedDelivery) => {
      const { id } = (delivery.payload as { data: { id: string } }).data
      const attempt = (attempts.get(id) ?? 0) + 1
      attempts.set(id, attempt)
      if (id === held && attempt === 1) {
        started()
        await gate
      }
      if (attempt <= (deliveries[ids.indexOf(id)]?.failTimes ?? 0)) throw new Error(`failure ${attempt} of ${id}`)
      successes.set(id, (successes.get(id) ?? 0) + 1)
    }
    const options = { connection: connection(), store, processingTtl: 2, lockDuration: 600, stalledInterval: 300 }
    const first = worker(jobs, handler, options)

    const sending = deliveries.flatMap(({ copies }, at) =>
      Array.from({ length: copies }, async (_, copy) => {
        const body = JSON.stringify({ event: 'order.paid', data: { id: ids[at] } })
        const headers = { 'content-type': 'application/json', 'x-service-hmac-signature': await sign(body, SECRET) }
        const receiver = receivers[copy % 2] as (typeof receivers)[number]
        // The service's retries: until a 2xx, a few tens of milliseconds apart.
        for (let attempt = 0; attempt < 60; attempt++) {
          const answer = await receiver.verify({ method: 'POST', url: 'https://app.example/hooks', headers, body })
          const status = answer.ok ? 0 : answer.response.status
          if (status >= 200 && status < 300) return status
          expect([409, 503]).toContain(status)
          await new Promise((resolve) => setTimeout(resolve, 30))
        }
        throw new Error(`${ids[at]} copy ${copy} never accepted`)
      }),
    )
    if (pause !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, pause.afterMs))
      await connection().call('CLIENT', 'PAUSE', String(pause.forMs), 'WRITE')
    }
    if (held !== undefined) {
      await holdStarted
      await first.close(true)
      letGo()
      worker(jobs, handler, { ...options, connection: connection() })
    }
    const statuses = await Promise.all(sending)
    // Exactly one copy's enqueue added each job, unless a timed-out first enqueue added it (then none says 202).
    expect(statuses.filter((status) => status === 202).length).toBeLessThanOrEqual(ids.length)
    await until(
      async () => ((await jobs.getCompletedCount()) === ids.length && ids.every((id) => successes.has(id)) ? true : undefined),
      'every delivery handled',
      8_000,
    )
    expect(Object.fromEntries(successes)).toEqual(Object.fromEntries(ids.map((id) => [id, 1])))
    const counts = await jobs.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed')
    expect(counts).toEqual({ waiting: 0, active: 0, delayed: 0, completed: ids.length, failed: 0 })
  }

  it('runs each handler to success exactly once, and queues one job per delivery', async () => {
    await fc.assert(fc.asyncProperty(schedules, play), { numRuns: 4, seed: 20_261_128, endOnFailure: true })
  }, 30_000)
})
