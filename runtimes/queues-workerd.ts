import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { sign } from '@hookguard/core'
import { Miniflare, type MiniflareOptions } from 'miniflare'
import { bundleWorker, type WorkerModule, workerModules } from './bundle.ts'
import { parseArgs } from './suite/args.ts'
import {
  type Consumed,
  type ConsumedCounts,
  DEAD_LETTER_QUEUE,
  MAX_BODY_SIZE,
  MAX_RETRIES,
  QUEUE,
  QUEUES_SECRET,
  type QueuedPayload,
  STEADY_MAX_RETRIES,
  STEADY_QUEUE,
} from './suite/queues.ts'
import { assert, Tally } from './suite/reply.ts'

// The hand-off on Cloudflare Queues: `queues-worker.ts`, bundled as wrangler would, runs in
// workerd through miniflare (which needs Node 22 or later) with a queue, its consumer, a
// dead-letter queue and the Durable Object dedupe store, and Node delivers to it over HTTP. Each
// case is counted per delivery: the answers, the handler's runs, the queue messages that carried
// it, and what reached the dead-letter queue.
//
//   runtimes/node_modules/node24/bin/node runtimes/queues-workerd.ts [--keep]
//
// A job of `pnpm test:runtimes`; Node 24 strips this file's types itself.

/** As in workerd.ts: fixed, so that a newer workerd cannot change what the Worker may use unnoticed. */
const COMPATIBILITY_DATE = '2026-07-01'
/** What the consumer must have done by then, or the case fails. */
const CONSUME_DEADLINE_MS = 30_000
/**
 * Copies that keep arriving: a consumer that meets a receiver's look waits at most twice its
 * claimTimeout (1 s) for each, far less than processingTtl (300 s).
 */
const STEADY_DEADLINE_MS = 20_000

const args = parseArgs(process.argv.slice(2))
const tally = new Tally()
const out = await mkdtemp(path.join(tmpdir(), 'hookguard-queues-workerd-'))

interface Plan {
  payload: QueuedPayload
  body: string
  signature: string
}

let modules: WorkerModule[] = []
let mf: Miniflare | undefined
let origin = ''

try {
  await tally.check('the Worker bundles for workerd: the core’s edge build, no Node built-in', async () => {
    modules = await workerModules(await bundleWorker(out, 'queues-worker.ts'))
  })
  if (modules.length > 0) {
    await tally.check('the Worker loads in workerd with its queue, consumer and dead-letter queue, without nodejs_compat', async () => {
      mf = new Miniflare(options())
      origin = (await mf.ready).origin
    })
  }
  if (mf !== undefined) await runChecks()
} finally {
  await mf?.dispose().catch(() => undefined)
  if (args.keep === undefined) await rm(out, { recursive: true, force: true })
  else console.log(`kept ${out}`)
}
process.exitCode = tally.report('workerd (Cloudflare Queues hand-off)') === 0 ? 0 : 1

function options(): MiniflareOptions {
  return {
    modules,
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: [],
    host: '127.0.0.1',
    port: 0,
    durableObjects: {
      DEDUPE: { className: 'HookguardDedupe', useSQLite: true },
      LEDGER: { className: 'Ledger', useSQLite: true },
    },
    queueProducers: { WEBHOOKS: { queueName: QUEUE }, STEADY: { queueName: STEADY_QUEUE } },
    // As the docs' wrangler.jsonc: a batch sent at once here, retries after no delay, so the run is short.
    queueConsumers: {
      [QUEUE]: { maxBatchSize: 10, maxBatchTimeout: 0, maxRetries: MAX_RETRIES, deadLetterQueue: DEAD_LETTER_QUEUE, retryDelay: 0 },
      [STEADY_QUEUE]: { maxBatchSize: 10, maxBatchTimeout: 0, maxRetries: STEADY_MAX_RETRIES, deadLetterQueue: DEAD_LETTER_QUEUE },
      [DEAD_LETTER_QUEUE]: { maxBatchSize: 10, maxBatchTimeout: 0 },
    },
  }
}

async function runChecks(): Promise<void> {
  await tally.check(
    'delivered: 202 with the job id at once, each consumed once, with the exact payload and raw bytes, one message each',
    async () => {
      const list = await plans('delivered', 8)
      for (const plan of list) {
        const res = await post('/hooks', plan)
        const answer = (await res.json()) as { queued?: boolean; jobId?: string }
        assert(
          res.status === 202 && answer.queued === true && /^hg-[0-9a-f]{64}$/.test(answer.jobId ?? ''),
          `answered ${res.status} ${JSON.stringify(answer)}`,
        )
      }
      const counts = await consumed(list)
      for (const { payload, body } of list) {
        const seen = counts[payload.id] as Consumed
        assert(seen.started === 1 && seen.completed === 1 && seen.messages === 1, `${payload.id}: ${JSON.stringify(seen)}`)
        assert(seen.raw === body, `${payload.id}: the handler saw other raw bytes: ${JSON.stringify(seen.raw)}`)
        assert(seen.payload === JSON.stringify(JSON.parse(body)), `${payload.id}: the handler saw another payload`)
      }
      report('delivered', list, counts)
    },
  )

  await tally.check('copies while queued and after: 200 duplicate, one message, one run', async () => {
    const list = await plans('copies', 4, { ms: 300 })
    const answers: number[] = []
    for (const plan of list) {
      answers.push((await post('/hooks', plan)).status)
      // While the job waits or runs: the marker (queued) or the consumer's claim (409 while it runs) answers.
      for (let copy = 0; copy < 3; copy++) answers.push(await deliver('/hooks', plan))
    }
    const counts = await consumed(list)
    // After it ran: the consumer's done mark answers.
    for (const plan of list) answers.push(await deliver('/hooks', plan))
    assert(answers.filter((status) => status === 202).length === list.length, `answers ${answers.join(' ')}`)
    assert(answers.filter((status) => status === 200).length === list.length * 4, `answers ${answers.join(' ')}`)
    for (const { payload } of list) {
      const seen = counts[payload.id] as Consumed
      assert(seen.messages === 1 && seen.started === 1 && seen.completed === 1, `${payload.id}: ${JSON.stringify(seen)}`)
    }
    report('copies', list, counts)
  })

  await tally.check('copies that keep arriving while the job is consumed: it runs within seconds, once', async () => {
    // Each copy's look at the store holds the key for a moment; a consumer that meets one retries
    // once that look can have ended, not after processingTtl (300 s).
    const list = await plans('steady', 3)
    let sending = true
    const senders = list.flatMap((plan) =>
      Array.from({ length: 4 }, async () => {
        while (sending) {
          await deliver('/steady/hooks', plan)
          // As a sender that retries soon; with none between, the looks of 12 copies in a loop
          // hold a key most of the time, and a consumer meets one after another.
          await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 100))
        }
      }),
    )
    const began = Date.now()
    try {
      const counts = await until((all) => list.every(({ payload }) => all[payload.id]?.completed === 1), 'consumed', STEADY_DEADLINE_MS)
      for (const { payload } of list) {
        const seen = counts[payload.id] as Consumed
        assert(seen.messages === 1 && seen.started === 1 && seen.deadLettered === 0, `${payload.id}: ${JSON.stringify(seen)}`)
      }
      console.log(`steady copies: consumed in ${Date.now() - began} ms`)
    } finally {
      sending = false
      await Promise.all(senders)
    }
  })

  await tally.check('a handler that fails twice, then succeeds: three runs of one message, one success', async () => {
    const list = await plans('flaky', 4, { fail: 2 })
    for (const plan of list) assert((await post('/hooks', plan)).status === 202, 'not queued')
    const counts = await consumed(list)
    for (const { payload } of list) {
      const seen = counts[payload.id] as Consumed
      assert(
        seen.started === 3 && seen.failed === 2 && seen.completed === 1 && seen.messages === 1 && seen.deadLettered === 0,
        `${payload.id}: ${JSON.stringify(seen)}`,
      )
    }
    report('flaky', list, counts)
  })

  await tally.check(
    `poison: a handler that always fails runs ${MAX_RETRIES + 1} times and its message reaches the dead-letter queue; a message that is no job reaches it without a run; the rest go on`,
    async () => {
      const [poison] = await plans('poison', 1, { fail: 1000 })
      const rest = await plans('beside-poison', 8)
      const sent = await Promise.all([poison as Plan, ...rest].map((plan) => post('/hooks', plan)))
      assert(
        sent.every((res) => res.status === 202),
        `answers ${sent.map((res) => res.status).join(' ')}`,
      )
      const raw = await fetch(`${origin}/test/send-raw`, { method: 'POST', body: JSON.stringify({ poison: 'not-a-job', hello: 'world' }) })
      assert(raw.status === 204, `sending the raw message answered ${raw.status}`)
      const counts = await until((all) => all['not-a-job']?.deadLettered === 1 && all['poison-0']?.deadLettered === 1, 'dead-lettered')
      const bad = counts['poison-0'] as Consumed
      assert(bad.started === MAX_RETRIES + 1 && bad.completed === 0 && bad.messages === 1, `poison-0: ${JSON.stringify(bad)}`)
      const junk = counts['not-a-job'] as Consumed
      assert(junk.started === 0 && junk.messages === 1, `not-a-job: ${JSON.stringify(junk)}`)
      const good = await consumed(rest)
      for (const { payload } of rest) {
        const seen = good[payload.id] as Consumed
        assert(seen.started === 1 && seen.completed === 1 && seen.deadLettered === 0, `${payload.id}: ${JSON.stringify(seen)}`)
      }
      console.log(`poison: ${JSON.stringify(bad)}; no job: ${JSON.stringify(junk)}`)
      // A copy of the dead-lettered delivery is a duplicate: the dead-letter queue holds it.
      assert((await post('/hooks', poison as Plan)).status === 200, 'a copy of the dead-lettered delivery was queued again')
    },
  )

  await tally.check(
    'concurrent copies: 12 deliveries × 6 copies at once, each sent until a 2xx: one 202, one message, one run each',
    async () => {
      const list = await plans('concurrent', 12, { ms: 50 })
      const answers = new Map<string, number[]>()
      await Promise.all(
        list.flatMap((plan) =>
          Array.from({ length: 6 }, async () => {
            const status = await deliver('/hooks', plan)
            answers.set(plan.payload.id, [...(answers.get(plan.payload.id) ?? []), status])
          }),
        ),
      )
      const counts = await consumed(list)
      for (const { payload } of list) {
        const got = answers.get(payload.id) ?? []
        const seen = counts[payload.id] as Consumed
        assert(got.filter((status) => status === 202).length === 1, `${payload.id}: answers ${got.join(' ')}`)
        assert(seen.messages === 1 && seen.started === 1 && seen.completed === 1, `${payload.id}: ${JSON.stringify(seen)}`)
      }
      report('concurrent', list, counts)
    },
  )

  await tally.check(
    'no store at the hand-off (fetch handler): 6 deliveries × 4 copies at once, every copy a message, each run once',
    async () => {
      const list = await plans('every-copy', 6, { ms: 100 })
      const statuses = await Promise.all(list.flatMap((plan) => Array.from({ length: 4 }, () => deliver('/every-copy/hooks', plan))))
      assert(
        statuses.every((status) => status === 202),
        `answers ${statuses.join(' ')}`,
      )
      const counts = await until(
        (all) => list.every(({ payload }) => all[payload.id]?.completed === 1 && all[payload.id]?.messages === 4),
        'every copy consumed',
      )
      // Copies met while another consumer ran the delivery are retried after its claim, and then found done.
      await new Promise((resolve) => setTimeout(resolve, 2500))
      const after = await ledger()
      for (const { payload } of list) {
        const seen = after[payload.id] as Consumed
        assert(seen.started === 1 && seen.completed === 1 && seen.deadLettered === 0, `${payload.id}: ${JSON.stringify(seen)}`)
      }
      report('every-copy', list, counts)
    },
  )

  await tally.check('the queue cannot be reached: 503 queue_unavailable with Retry-After, nothing queued, no run', async () => {
    const [plan] = await plans('unreachable', 1)
    const res = await post('/unreachable', plan as Plan)
    const answer = (await res.json()) as { error?: string }
    assert(res.status === 503 && answer.error === 'queue_unavailable', `answered ${res.status} ${JSON.stringify(answer)}`)
    assert(res.headers.get('retry-after') === '5', `Retry-After: ${res.headers.get('retry-after')}`)
    // Once the queue is back, the service's retry is queued: the marker was given back.
    assert((await post('/hooks', plan as Plan)).status === 202, 'the retry was not queued')
    const counts = await consumed([plan as Plan])
    assert(counts['unreachable-0']?.messages === 1, JSON.stringify(counts['unreachable-0']))
  })

  await tally.check(`a body of maxBodySize (${MAX_BODY_SIZE} bytes) fits one message of the queue's 128 KB`, async () => {
    const [plan] = await plans('largest', 1, { size: MAX_BODY_SIZE })
    assert(new TextEncoder().encode((plan as Plan).body).byteLength === MAX_BODY_SIZE, 'the body is not maxBodySize')
    const res = await post('/hooks', plan as Plan)
    assert(res.status === 202, `answered ${res.status} ${await res.text()}`)
    const counts = await consumed([plan as Plan])
    assert(counts['largest-0']?.raw === (plan as Plan).body, 'the handler saw other raw bytes')
  })
}

/** `count` deliveries named `label-i`, their bodies made different by whitespace, escapes and other scripts. */
async function plans(label: string, count: number, { fail = 0, ms = 0, size = 0 } = {}): Promise<Plan[]> {
  const notes = ['plain', 'tab\there', 'ünïcödé 漢字 🚀', 'escaped \\"quotes\\" \\u003c', '  spaced  out  ']
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const payload: QueuedPayload = { id: `${label}-${i}`, fail, ms, note: notes[i % notes.length] as string }
      // Whitespace the service's signature ignores, kept in the raw bytes the handler must see.
      let body = i % 2 === 0 ? JSON.stringify(payload) : JSON.stringify(payload, null, 2)
      if (size > 0) {
        const bytes = new TextEncoder().encode(body).byteLength
        body = `${body.slice(0, -1)},"pad":"${'x'.repeat(size - bytes - 9)}"}`
      }
      return { payload, body, signature: await sign(body, QUEUES_SECRET) }
    }),
  )
}

function post(route: string, { body, signature }: Plan): Promise<Response> {
  return fetch(`${origin}${route}`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', 'x-service-hmac-signature': signature },
    signal: AbortSignal.timeout(15_000),
  })
}

/** One sender's copy: sent until a 2xx, waiting a little after a 409 or a 503, as the service retries (sooner); the 2xx's status. */
async function deliver(route: string, plan: Plan): Promise<number> {
  const deadline = Date.now() + CONSUME_DEADLINE_MS
  for (;;) {
    assert(Date.now() < deadline, `${plan.payload.id}: no 2xx within ${CONSUME_DEADLINE_MS / 1000} s`)
    const res = await post(route, plan)
    const text = await res.text()
    if (res.ok) return res.status
    assert(res.status === 409 || res.status === 503, `${plan.payload.id}: answered ${res.status} ${text.slice(0, 200)}`)
    await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 60))
  }
}

async function ledger(): Promise<ConsumedCounts> {
  return (await (await fetch(`${origin}/test/ledger`)).json()) as ConsumedCounts
}

/** The ledger once `done` holds of it, polled every 50 ms, within the deadline. */
async function until(done: (counts: ConsumedCounts) => boolean, what: string, within = CONSUME_DEADLINE_MS): Promise<ConsumedCounts> {
  const deadline = Date.now() + within
  for (;;) {
    const counts = await ledger()
    if (done(counts)) return counts
    assert(Date.now() < deadline, `not ${what} within ${within / 1000} s: ${JSON.stringify(counts).slice(0, 600)}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** The ledger once every delivery of `list` completed once. */
function consumed(list: readonly Plan[]): Promise<ConsumedCounts> {
  return until((counts) => list.every(({ payload }) => (counts[payload.id]?.completed ?? 0) >= 1), 'all consumed')
}

function report(label: string, list: readonly Plan[], counts: ConsumedCounts): void {
  const total = (field: keyof Consumed) => list.reduce((sum, { payload }) => sum + Number(counts[payload.id]?.[field] ?? 0), 0)
  console.log(
    `${label}: ${list.length} deliveries, ${total('messages')} messages, ${total('started')} runs, ${total('completed')} successes, ${total('deadLettered')} dead-lettered`,
  )
}
