import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { sign } from '@hookguard/core'
import { Miniflare, type MiniflareOptions } from 'miniflare'
import { bundleWorker, type WorkerModule, workerModules } from './bundle.ts'
import { parseArgs } from './suite/args.ts'
import {
  DEDUPE_SECRET,
  DEFAULT_SHARDS,
  HONO_SHARDS,
  type LedgerCounts,
  OPEN_MAX_ROWS,
  OPEN_SHARDS,
  type TestPayload,
} from './suite/dedupe.ts'
import { assert, Tally } from './suite/reply.ts'

// "Each delivery once" on Cloudflare Workers: `dedupe-worker.ts`, bundled as wrangler would, runs
// in workerd through miniflare (which needs Node 22 or later) with its Durable Objects, and Node
// delivers to it over HTTP: many concurrent copies of each delivery, handlers that fail and are
// retried, the store's objects restarted mid-run, workerd itself restarted on its persisted
// storage, done marks expiring and swept by alarms, and objects that cannot answer.
//
//   runtimes/node_modules/node24/bin/node runtimes/dedupe-workerd.ts [--keep]
//
// A job of `pnpm test:runtimes`; Node 24 strips this file's types itself.

/** As in workerd.ts: fixed, so that a newer workerd cannot change what the Worker may use unnoticed. */
const COMPATIBILITY_DATE = '2026-04-26'
/** A wave of deliveries ends in time, or fails. */
const WAVE_DEADLINE_MS = 60_000

const args = parseArgs(process.argv.slice(2))
const tally = new Tally()
const out = await mkdtemp(path.join(tmpdir(), 'hookguard-dedupe-workerd-'))

interface Answers {
  handled: number
  duplicate: number
  reset: number
}

interface Plan {
  payload: TestPayload
  body: string
  signature: string
}

/** What the senders of one wave met on the way to their 2xx. */
interface Stats {
  requests: number
  inProgress: number
  failed: number
  unavailable: number
  networkErrors: number
  /**
   * Per delivery id: the copies answered by the handler's own 2xx, those answered as duplicates,
   * and the connections reset on the way (a keep-alive connection workerd closed as it was reused).
   */
  answers: Map<string, Answers>
}

let modules: WorkerModule[] = []
let mf: Miniflare | undefined
let origin = ''

try {
  await tally.check(
    'the Worker bundles for workerd: the core’s edge build, no Node built-in, only cloudflare: imports and its WebAssembly module left',
    async () => {
      modules = await workerModules(await bundleWorker(out, 'dedupe-worker.ts'))
    },
  )
  if (modules.length > 0) {
    await tally.check('the Worker loads in workerd with its Durable Objects, without nodejs_compat', async () => {
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
process.exitCode = tally.report('workerd (Durable Object dedupe)') === 0 ? 0 : 1

function options(): MiniflareOptions {
  return {
    // The script and the core's strip.wasm, as wrangler uploads them.
    modules,
    compatibilityDate: COMPATIBILITY_DATE,
    // No `nodejs_compat`: the store and the adapters must run without it.
    compatibilityFlags: [],
    host: '127.0.0.1',
    port: 0,
    durableObjects: {
      DEDUPE: { className: 'TestDedupe', useSQLite: true },
      LEDGER: { className: 'Ledger', useSQLite: true },
      BROKEN: { className: 'NotRpc' },
      KV_DEDUPE: { className: 'KeyValueDedupe', useSQLite: false },
      OPEN: { className: 'OpenDedupe', useSQLite: true },
    },
    // On disk, so that a restart of workerd finds every claim and every done mark again.
    durableObjectsPersist: path.join(out, 'durable-objects'),
  }
}

async function runChecks(): Promise<void> {
  const all: Plan[] = []

  const hono = await plans('hono', 24, { slowMs: [20, 150] })
  all.push(...hono)
  await tally.check(
    `Hono app, ${HONO_SHARDS} shards: 24 deliveries × 8 concurrent copies, a third failing once or twice (500 or a throw), each handled once`,
    () => wave('/hono/hooks', hono, 8),
  )

  const fetched = await plans('fetch', 24, { slowMs: [20, 150] })
  all.push(...fetched)
  await tally.check(
    `fetch handler, ${DEFAULT_SHARDS} shards: 24 deliveries × 8 concurrent copies, a third failing once or twice, each handled once`,
    () => wave('/fetch/hooks', fetched, 8),
  )

  await tally.check('the claims are spread over the shards, each with its sweep alarm set, and nothing more is kept', async () => {
    const shards = await rows(DEFAULT_SHARDS)
    const total = shards.reduce((sum, shard) => sum + shard.rows, 0)
    assert(total === all.length, `${total} rows for ${all.length} handled deliveries`)
    const used = shards.filter((shard) => shard.rows > 0)
    assert(used.length >= DEFAULT_SHARDS / 2, `only ${used.length} of ${DEFAULT_SHARDS} objects hold keys`)
    assert(
      used.every((shard) => shard.alarm !== null),
      'an object that holds rows has no alarm set',
    )
    console.log(`rows per object: ${shards.map((shard) => shard.rows).join(' ')}`)
  })

  const restarted = await plans('restart', 16, { slowMs: [100, 300] })
  all.push(...restarted)
  await tally.check(
    'with every object restarted every 150 ms mid-run (calls in flight fail): 16 deliveries × 6 copies, each handled once',
    async () => {
      let restarts = 0
      let done = false
      const restarting = (async () => {
        while (!done) {
          // Further apart than a call and its retries take, as a deploy's resets are.
          await sleep(150)
          const res = await fetch(`${origin}/test/restart?shards=${DEFAULT_SHARDS}`)
          restarts += ((await res.json()) as { restarted: number }).restarted
        }
      })()
      try {
        await wave('/hono/hooks', restarted, 6)
      } finally {
        done = true
        await restarting
      }
      assert(restarts > 0, 'no object was restarted')
      const calls = (await (await fetch(`${origin}/test/failed-calls`)).json()) as { failed: number; retryable: number }
      console.log(`objects restarted: ${restarts}; calls to them that failed: ${calls.failed}, ${calls.retryable} of them retryable`)
    },
  )

  await tally.check(
    'after workerd restarts on its persisted storage, every delivery so far is answered 200 as a duplicate, none run again',
    async () => {
      const before = await ledger()
      await mf?.setOptions(options())
      origin = (await (mf as Miniflare).ready).origin
      const stats = newStats()
      await Promise.all(all.flatMap((plan) => [1, 2].map(() => deliver(pathOf(plan), plan, stats))))
      assert(
        [...stats.answers.values()].every((answer) => answer.handled === 0),
        'a delivery ran again after the restart',
      )
      const after = await ledger()
      assert(JSON.stringify(after) === JSON.stringify(before), 'the ledger changed across the restart')
      console.log(`after the restart: ${stats.requests} requests, all duplicates`)
    },
  )

  const short = await plans('short', 6, { slowMs: [20, 60] })
  await tally.check('with ttl: 1, the done marks expire, alarms delete their rows, and the deliveries run again', async () => {
    const baseline = await totalRows()
    await wave('/hono/short', short, 4)
    const held = await totalRows()
    assert(held === baseline + short.length, `${held} rows, expected ${baseline} + ${short.length}`)
    const began = Date.now()
    let left = held
    while (left > baseline && Date.now() - began < 10_000) {
      await sleep(200)
      left = await totalRows()
    }
    assert(left === baseline, `the alarms left ${left - baseline} expired rows after 10 s`)
    console.log(`expired rows swept ${Date.now() - began} ms after the wave`)
    const stats = newStats()
    await Promise.all(short.map((plan) => deliver('/hono/short', plan, stats)))
    const counts = await ledger()
    for (const { payload } of short) {
      const completed = counts[payload.id]?.completed
      assert(completed === 2, `${payload.id} completed ${completed} times, expected twice (once per TTL)`)
    }
  })

  await tally.check(
    `mode none, a sender who never stops: 2 000 new deliveries, each object keeps at most maxRows (${OPEN_MAX_ROWS}), the rest 503, none run twice`,
    async () => {
      const sent = 2000
      // Handlers that succeed at once: every row past the bound would be a claim or a done mark kept.
      const flood: Plan[] = Array.from({ length: sent }, (_, i) => {
        const payload: TestPayload = { id: `open-${i}`, fail: 0, throws: false, ms: 0 }
        return { payload, body: JSON.stringify(payload), signature: '' }
      })
      const answers = new Map<number, number>()
      const handled: Plan[] = []
      let next = 0
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < flood.length) {
            const plan = flood[next++] as Plan
            const res = await post('/hono/open', plan)
            await res.arrayBuffer()
            answers.set(res.status, (answers.get(res.status) ?? 0) + 1)
            if (res.status === 200) handled.push(plan)
          }
        }),
      )
      const shards = (await (await fetch(`${origin}/test/open-rows`)).json()) as { rows: number }[]
      console.log(
        `mode none flood: ${sent} deliveries answered ${JSON.stringify(Object.fromEntries(answers))}; rows per object: ${shards.map((s) => s.rows).join(' ')}`,
      )
      assert(
        shards.every((shard) => shard.rows <= OPEN_MAX_ROWS),
        `an object keeps more than ${OPEN_MAX_ROWS} rows`,
      )
      assert(handled.length === OPEN_SHARDS * OPEN_MAX_ROWS, `${handled.length} handled, expected ${OPEN_SHARDS * OPEN_MAX_ROWS}`)
      assert(answers.get(503) === sent - handled.length, 'the deliveries past the bound were not all answered 503')
      // Every handled delivery's done mark is still there: its copy is a duplicate, never a second run.
      const stats = newStats()
      await Promise.all(handled.map((plan) => deliver('/hono/open', plan, stats)))
      assert(
        [...stats.answers.values()].every((answer) => answer.handled === 0 && answer.duplicate === 1),
        'a handled delivery ran again',
      )
      const counts = await ledger()
      assert(
        handled.every(({ payload }) => counts[payload.id]?.started === 1),
        'a handled delivery started more than once',
      )
    },
  )

  await tally.check('an object that cannot answer: 503 store_unavailable with Retry-After, and the handler never runs', async () => {
    const [plan] = await plans('broken', 1, { slowMs: [0, 0] })
    const res = await post('/hono/broken', plan as Plan)
    const answer = (await res.json()) as { error?: string }
    assert(res.status === 503 && answer.error === 'store_unavailable', `answered ${res.status} ${JSON.stringify(answer)}`)
    assert(res.headers.get('retry-after') !== null, 'no Retry-After')
    assert((await ledger())[(plan as Plan).payload.id] === undefined, 'the handler ran')
  })

  await tally.check(
    'HookguardDedupe on key-value storage: 503 store_unavailable, and the error says to use new_sqlite_classes',
    async () => {
      const [plan] = await plans('kv', 1, { slowMs: [0, 0] })
      const res = await post('/hono/kv', plan as Plan)
      assert(res.status === 503, `answered ${res.status}`)
      const { error } = (await (await fetch(`${origin}/test/kv-claim`)).json()) as { error: string | null }
      assert(error?.includes('new_sqlite_classes'), `the claim failed with: ${error}`)
    },
  )
}

/** `count` deliveries named `label-i`: every third fails its first run or two, half of those by throwing. */
async function plans(label: string, count: number, { slowMs: [min, max] }: { slowMs: [number, number] }): Promise<Plan[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const payload: TestPayload = {
        id: `${label}-${i}`,
        fail: i % 3 === 1 ? 1 + (i % 2) : 0,
        throws: i % 2 === 0,
        ms: min + ((i * 37) % (max - min + 1)),
      }
      const body = JSON.stringify(payload)
      return { payload, body, signature: await sign(body, DEDUPE_SECRET) }
    }),
  )
}

function pathOf(plan: Plan): string {
  return plan.payload.id.startsWith('fetch-') ? '/fetch/hooks' : '/hono/hooks'
}

/**
 * Sends `copies` copies of every delivery at once, each retrying until it gets a 2xx, then checks
 * per delivery: the handler completed once, started once more than it was told to fail (no two
 * runs at once), and exactly one copy got the handler's own answer, every other one a duplicate's.
 */
async function wave(route: string, list: readonly Plan[], copies: number): Promise<void> {
  const stats = newStats()
  await Promise.all(list.flatMap((plan) => Array.from({ length: copies }, () => deliver(route, plan, stats))))
  const counts = await ledger()
  const problems: string[] = []
  for (const { payload } of list) {
    const seen = counts[payload.id]
    const answers = stats.answers.get(payload.id)
    if (seen?.completed !== 1) problems.push(`${payload.id} completed ${seen?.completed ?? 0} times`)
    if (seen?.started !== payload.fail + 1) problems.push(`${payload.id} started ${seen?.started ?? 0} times, failing ${payload.fail}`)
    // One copy gets the handler's answer, unless a reset connection lost it; every other copy, a duplicate's.
    const handled = answers?.handled ?? 0
    if (handled + (answers?.duplicate ?? 0) !== copies || handled > 1 || (handled === 0 && answers?.reset === 0)) {
      problems.push(`${payload.id}: answers ${JSON.stringify(answers)}`)
    }
  }
  console.log(
    `${route}: ${list.length} deliveries × ${copies} copies, ${stats.requests} requests: ${stats.inProgress} × 409, ${stats.failed} × 500, ${stats.unavailable} × 503, ${stats.networkErrors} connections reset`,
  )
  assert(problems.length === 0, problems.join('; '))
}

function answersOf(stats: Stats, plan: Plan): Answers {
  const answers = stats.answers.get(plan.payload.id) ?? { handled: 0, duplicate: 0, reset: 0 }
  stats.answers.set(plan.payload.id, answers)
  return answers
}

function newStats(): Stats {
  return { requests: 0, inProgress: 0, failed: 0, unavailable: 0, networkErrors: 0, answers: new Map() }
}

/** One sender's copy: sent until a 2xx, waiting a little after a 409, a 5xx or a lost connection, as the service retries (sooner). */
async function deliver(route: string, plan: Plan, stats: Stats): Promise<void> {
  const deadline = Date.now() + WAVE_DEADLINE_MS
  for (;;) {
    if (Date.now() > deadline) throw new Error(`${plan.payload.id}: no 2xx within ${WAVE_DEADLINE_MS / 1000} s`)
    stats.requests++
    let res: Response
    try {
      res = await post(route, plan)
    } catch {
      stats.networkErrors++
      answersOf(stats, plan).reset++
      await sleep(50 + Math.random() * 100)
      continue
    }
    const text = await res.text()
    if (res.ok) {
      const answer = JSON.parse(text) as { handled?: string; duplicate?: boolean }
      const answers = answersOf(stats, plan)
      if (answer.duplicate === true) answers.duplicate++
      else if (answer.handled === plan.payload.id) answers.handled++
      else throw new Error(`${plan.payload.id}: unexpected answer ${text}`)
      return
    }
    if (res.status === 409) {
      stats.inProgress++
      assert(
        Number(res.headers.get('retry-after')) >= 1,
        `409 without a Retry-After of a second or more: ${res.headers.get('retry-after')}`,
      )
    } else if (res.status === 500) stats.failed++
    else if (res.status === 503) stats.unavailable++
    else throw new Error(`${plan.payload.id}: answered ${res.status} ${text.slice(0, 200)}`)
    await sleep(50 + Math.random() * 150)
  }
}

function post(route: string, { body, signature }: Plan): Promise<Response> {
  return fetch(`${origin}${route}`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', 'x-service-hmac-signature': signature },
    signal: AbortSignal.timeout(15_000),
  })
}

async function ledger(): Promise<LedgerCounts> {
  return (await (await fetch(`${origin}/test/ledger`)).json()) as LedgerCounts
}

async function rows(shards: number): Promise<{ rows: number; alarm: number | null }[]> {
  return (await (await fetch(`${origin}/test/rows?shards=${shards}`)).json()) as { rows: number; alarm: number | null }[]
}

async function totalRows(): Promise<number> {
  return (await rows(DEFAULT_SHARDS)).reduce((sum, shard) => sum + shard.rows, 0)
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
