/**
 * Answer fast, process later (`pnpm bench --only handoff`): the answer's latency as the service
 * sees it, at a fixed rate with a handler that takes 200 ms, for four Express 5 servers side by
 * side in one run, taking turns in rounds: `inline` (the handler works before the answer),
 * `handoff` (the delivery goes on a BullMQ queue on a real redis-server and a worker process does
 * the work), `verified` (`webhook()` answering 202 at once: what verifying costs, which no
 * hand-off can undercut), `empty` (a route that answers 202 and does nothing: the floor of any
 * answer) and `control` (the same empty route in a process of its own: how far two identical
 * servers read apart in one run, the least difference between two rows the run can tell from the
 * machine's noise). Open loop (bench/open-loop.ts), so a slow answer cannot slow the sender down and hide
 * its own wait. Then the same turns again for `empty`, `verified` and `handoff` with no worker
 * running: the answer as a deployment whose workers run on other machines sees it, where on two
 * shared cores the worker's turns and its queue commands land among the answers measured. Then the
 * workers: deliveries a second through an emptied handler, and the delay from receipt to the
 * handler's start.
 *
 *   node --import tsx bench/handoff.ts [--quick] [--rate=N]
 *
 * `--rate=N` sends N deliveries a second instead of 1 000: the same run at a rate that leaves the
 * machine room, to tell the hand-off's own latency from the queue a full machine builds.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { startRedis } from '@hookguard/testkit/redis-server'
import { Redis } from 'ioredis'
import { numberFlag } from './flags.ts'
import { SECRET } from './handoff-shared.ts'
import { quantile, RESULT_PREFIX } from './measure.ts'
import { type OpenLoopResult, openLoop, pooled } from './open-loop.ts'

const quick = process.argv.includes('--quick')
const RATE = numberFlag('rate') ?? (quick ? 200 : 1000)
const DURATION_S = quick ? 3 : 30
const WARMUP_S = quick ? 1 : 3
/** Turns each server takes, the measured seconds split between them. */
const ROUNDS = quick ? 1 : 3
const WORK_MS = 200
/** Enough handlers at once for the rate: 1 000 a second × 0.2 s is 200 under way. */
const WORKER_CONCURRENCY = 400
const THROUGHPUT_DELIVERIES = quick ? 500 : 5000
const THROUGHPUT_CONCURRENCY = 50
const VARIANTS = ['empty', 'verified', 'handoff', 'inline', 'control'] as const
type Variant = (typeof VARIANTS)[number]
/** The variants measured again with no worker on the machine (`inline` has none to leave out). */
const WORKER_ELSEWHERE = ['empty', 'verified', 'handoff', 'control'] as const
type ElsewhereVariant = (typeof WORKER_ELSEWHERE)[number]

/** What each process on the machine spent per delivery, in microseconds of CPU. */
export interface ProcessCpu {
  server: number
  redis: number
  worker: number
  sender: number
}

export interface MachineCpu {
  /** The cores the processes share (`os.availableParallelism()`). */
  cores: number
  withWorker: Partial<Record<Variant, ProcessCpu>>
  workerElsewhere: Partial<Record<ElsewhereVariant, ProcessCpu>>
}

type Answers<V extends Variant> = Record<Exclude<V, 'control'>, OpenLoopResult> & { control?: OpenLoopResult }

export interface HandoffFigures {
  runtime: string
  rate: number
  durationS: number
  workMs: number
  bodyBytes: number
  /** Turns each server took (runs recorded before rounds have none). */
  rounds?: number
  /** Runs recorded before the control route have no `control`. */
  answers: Answers<Variant>
  /**
   * The same answers with no worker process running (a deployment's workers on other machines):
   * what the hand-off's answer costs apart from the worker sharing this machine's cores. Runs
   * recorded before this was measured have none.
   */
  workerElsewhere?: Answers<ElsewhereVariant>
  /** The server process's CPU time (user + system) per delivery over the measured window, in microseconds. */
  cpuPerDeliveryUs: Partial<Record<Variant, number>>
  /**
   * Every process's CPU time per delivery over the same windows, in microseconds: the server, Redis,
   * the worker (while one runs) and the sender, which share the machine's cores. Runs recorded
   * before this was measured have none.
   */
  machine?: MachineCpu
  /**
   * How the worker process was scheduled beside the servers: Linux's idle policy (`SCHED_IDLE`), or
   * only `nice` 19 where that is not to be had. Runs recorded before this was told ran at `nice` 19.
   */
  workerPolicy?: 'idle' | 'nice'
  /** With the handler of `workMs`: milliseconds from the receiver's verdict to the handler's start. */
  endToEnd: { deliveries: number; p50: number; p99: number }
  /** Deliveries a second one worker process runs with a handler that does nothing, from a backlog. */
  worker: { deliveries: number; concurrency: number; perSecond: number }
}

const children = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of children) child.kill()
})

function start<T>(file: string, args: string[]): Promise<{ child: ChildProcess; first: T }> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL(file, import.meta.url)), args, { execArgv: process.execArgv, stdio: 'inherit' })
    children.add(child)
    child.once('message', (first) => resolve({ child, first: first as T }))
    child.once('error', reject)
    child.once('exit', (code) => {
      children.delete(child)
      reject(new Error(`${file} exited with ${code}`))
    })
  })
}

function stop(child: ChildProcess): void {
  children.delete(child)
  child.removeAllListeners('exit')
  child.kill()
}

function ask<T>(child: ChildProcess, message: object): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (answer) => resolve(answer as T))
    child.send(message)
  })
}

const PAD = 'x'.repeat(900)
/** A 1 KiB delivery of its own for every request, signed as the service signs: no two share a job id. */
function deliveries(run: string) {
  return (i: number) => {
    const body = Buffer.from(`{"event":"order.paid","data":{"run":"${run}","seq":${i},"note":"${PAD}"}}`)
    const signature = createHmac('sha256', SECRET).update(body).digest('hex')
    return { body, headers: { 'content-type': 'application/json', 'x-service-hmac-signature': signature } }
  }
}

/** Redis's own CPU time so far (`INFO cpu`: its main thread and the others), in microseconds. */
async function redisCpuUs(redis: Redis): Promise<number> {
  const info = await redis.info('cpu')
  const seconds = (field: string) => Number(new RegExp(`^${field}:([0-9.]+)`, 'm').exec(info)?.[1] ?? Number.NaN)
  return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6
}

/** This process's CPU time so far, in microseconds: the sender's. */
function ownCpuUs(): number {
  const { user, system } = process.cpuUsage()
  return user + system
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`bench handoff: ${what} did not happen within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/**
 * The servers of `variants` take turns, a round each, so that what the host does meanwhile falls
 * on all of them alike; each server's rounds are then pooled.
 */
async function takeTurns<V extends Variant>(
  servers: Record<Variant, { child: ChildProcess; port: number }>,
  variants: readonly V[],
  label: string,
  others: { redis: Redis; worker?: ChildProcess },
): Promise<{ answers: Record<V, OpenLoopResult>; cpuPerDeliveryUs: Record<V, number>; machine: Record<V, ProcessCpu> }> {
  const rounds = Object.fromEntries(variants.map((variant) => [variant, [] as OpenLoopResult[]])) as Record<V, OpenLoopResult[]>
  const spent = Object.fromEntries(variants.map((variant) => [variant, { server: 0, redis: 0, worker: 0, sender: 0 }])) as Record<
    V,
    ProcessCpu
  >
  const readOthers = async () => ({
    redis: await redisCpuUs(others.redis),
    worker: others.worker === undefined ? 0 : (await ask<{ cpuUs: number }>(others.worker, { cpu: true })).cpuUs,
    sender: ownCpuUs(),
  })
  for (let round = 0; round < ROUNDS; round++) {
    for (const variant of variants) {
      const { child, port } = servers[variant]
      // The worker's last round of handlers ends before the next round starts.
      await new Promise((resolve) => setTimeout(resolve, 2 * WORK_MS))
      const before = (await ask<{ cpuUs: number }>(child, { cpu: true })).cpuUs
      const othersBefore = await readOthers()
      const result = await openLoop({
        port,
        path: '/hooks',
        rate: RATE,
        durationS: DURATION_S / ROUNDS,
        delivery: deliveries(`${label}${variant}-${round}`),
      })
      const othersAfter = await readOthers()
      spent[variant].server += (await ask<{ cpuUs: number }>(child, { cpu: true })).cpuUs - before
      for (const process of ['redis', 'worker', 'sender'] as const) spent[variant][process] += othersAfter[process] - othersBefore[process]
      // A refusal is the benchmark's own fault (a delivery not signed as the service signs), and
      // it answers sooner than a delivery: a run of them would time the wrong path. A 503 or an
      // answer that never came is a result, counted in the page's `answered` column.
      if (Object.keys(result.statuses).some((status) => status.startsWith('4')))
        throw new Error(`bench handoff: ${label}${variant} refused deliveries: ${JSON.stringify(result.statuses)}`)
      rounds[variant].push(result)
    }
  }
  const answers = {} as Record<V, OpenLoopResult>
  const cpuPerDeliveryUs = {} as Record<V, number>
  const machine = {} as Record<V, ProcessCpu>
  for (const variant of variants) {
    const { latencies: _, ...all } = pooled(rounds[variant])
    answers[variant] = { ...all, latencies: [] }
    const { server, redis, worker, sender } = spent[variant]
    machine[variant] = {
      server: server / all.answered,
      redis: redis / all.answered,
      worker: worker / all.answered,
      sender: sender / all.answered,
    }
    cpuPerDeliveryUs[variant] = machine[variant].server
    console.error(
      `bench handoff: ${label}${variant} p50 ${all.p50.toFixed(2)} ms, p99 ${all.p99.toFixed(2)} ms, ${JSON.stringify(all.statuses)}`,
    )
  }
  return { answers, cpuPerDeliveryUs, machine }
}

const redis = await startRedis({ own: true })
// Asks Redis for its CPU time around each window; one command before and one after, not in the window.
const probe = new Redis(redis.url)
try {
  const worker = await start<{ ready: true; policy: 'idle' | 'nice' }>('./handoff-worker.ts', [
    redis.url,
    String(WORK_MS),
    String(WORKER_CONCURRENCY),
  ])
  const servers = {} as Record<Variant, { child: ChildProcess; port: number }>
  for (const variant of VARIANTS) {
    const { child, first } = await start<{ port: number }>('./handoff-server.ts', [variant, String(WORK_MS), redis.url])
    servers[variant] = { child, port: first.port }
  }
  // Warm-up at the same rate: the JIT, the connection pool and the queue's scripts settle first.
  for (const variant of VARIANTS) {
    await openLoop({
      port: servers[variant].port,
      path: '/hooks',
      rate: RATE,
      durationS: WARMUP_S,
      delivery: deliveries(`${variant}-warm`),
    })
  }
  const { answers, cpuPerDeliveryUs, machine } = await takeTurns(servers, VARIANTS, '', { redis: probe, worker: worker.child })
  const expected = Math.round(RATE * (WARMUP_S + DURATION_S))
  let delays: number[] = []
  await waitFor(
    async () => {
      delays = (await ask<{ delays: number[] }>(worker.child, { report: true })).delays
      return delays.length >= expected
    },
    60_000,
    `the worker running all ${expected} deliveries`,
  )
  const measured = delays.slice(Math.round(RATE * WARMUP_S))
  const endToEnd = { deliveries: measured.length, p50: quantile(measured, 0.5), p99: quantile(measured, 0.99) }
  stop(worker.child)
  // No worker now: the hand-off's jobs wait in Redis, as they would for workers elsewhere.
  const elsewhere = await takeTurns(servers, WORKER_ELSEWHERE, 'no-worker-', { redis: probe })
  for (const variant of VARIANTS) stop(servers[variant].child)
  // An empty Redis for the throughput run, which counts every job its worker finds.
  probe.disconnect()
  await redis.restart()

  // Throughput: a backlog queued with no worker running, then one worker with an empty handler.
  const server = await start<{ port: number }>('./handoff-server.ts', ['handoff', '0', redis.url])
  const backlog = await openLoop({
    port: server.first.port,
    path: '/hooks',
    rate: RATE,
    durationS: THROUGHPUT_DELIVERIES / RATE,
    delivery: deliveries('backlog'),
  })
  if (backlog.statuses['202'] !== THROUGHPUT_DELIVERIES)
    throw new Error(`bench handoff: backlog answered ${JSON.stringify(backlog.statuses)}`)
  stop(server.child)
  const drainer = await start<{ ready: true }>('./handoff-worker.ts', [redis.url, '0', String(THROUGHPUT_CONCURRENCY)])
  let report = { delays: [] as number[], firstAt: 0, lastAt: 0 }
  await waitFor(
    async () => {
      report = await ask(drainer.child, { report: true })
      return report.delays.length >= THROUGHPUT_DELIVERIES
    },
    120_000,
    'the worker draining the backlog',
  )
  stop(drainer.child)
  const seconds = Math.max(report.lastAt - report.firstAt, 1) / 1000
  const figures: HandoffFigures = {
    runtime: `Node ${process.version}`,
    rate: RATE,
    durationS: DURATION_S,
    rounds: ROUNDS,
    workMs: WORK_MS,
    bodyBytes: deliveries('size')(0).body.byteLength,
    answers,
    workerElsewhere: elsewhere.answers,
    cpuPerDeliveryUs,
    workerPolicy: worker.first.policy,
    machine: { cores: availableParallelism(), withWorker: machine, workerElsewhere: elsewhere.machine },
    endToEnd,
    worker: { deliveries: THROUGHPUT_DELIVERIES, concurrency: THROUGHPUT_CONCURRENCY, perSecond: THROUGHPUT_DELIVERIES / seconds },
  }
  console.log(`${RESULT_PREFIX}${JSON.stringify(figures)}`)
} finally {
  probe.disconnect()
  await redis.stop()
}
process.exit(0)
