/**
 * Target 4: per framework, server CPU per request with `webhook()` against the framework's usual
 * JSON parser, and against the reviewers' reference verifier (raw body, one HMAC, `timingSafeEqual`,
 * `JSON.parse`), 1 KiB signed deliveries over loopback. Start it through run.ts, or alone:
 * `tsx bench/http.ts [--quick]`.
 *
 * The load generator (autocannon) runs here and each server in a child process, so the CPU the
 * child reports is the server's alone. CPU per request is the primary figure: req/s moves with
 * whatever else the machine does, while the CPU a request costs the server moves much less.
 *
 * Three sources of noise are kept out of the ratios. On two cores the load generator and a server
 * compete for both, so each is pinned to a core of its own where `taskset` exists. One server
 * process differs from another of the same code by up to a tenth in CPU per request (where the JIT
 * and the allocator happened to put things), so every round starts its servers afresh, warms them,
 * loads them at each load shape, and stops them: a ratio is a median over rounds of ratios between
 * processes started together, not one draw of each. And the host's speed drifts over seconds, so
 * within a load shape the servers take turns in short slices rather than one whole run each: each
 * sees the same stretch of the host.
 *
 * A fifth server, a second copy of the floor (`control`), measures the bench itself: its ratio to
 * the floor would be 1 on a quiet machine, and how far it strays is how small a difference a run
 * can tell.
 */
import { type ChildProcess, execFileSync } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { flag } from './flags.ts'
import { type ForkedServer, forkServer, sendDeliveries } from './http-fork.ts'
import { FRAMEWORKS, type Framework, VARIANTS, type Variant } from './http-server.ts'
import { median, RESULT_PREFIX } from './measure.ts'

export interface HttpVariantResult {
  /** Medians over the rounds. */
  cpuUs: number
  reqPerSec: number
  p99Ms: number
  requests: number
}

export interface HttpResult {
  framework: Framework
  /** Whether the servers and the load generator ran on cores of their own. */
  pinned: boolean
  /** The load shape: autocannon's concurrent connections. */
  connections: number
  baseline: HttpVariantResult
  /** The parser plus one bare HMAC of the raw bytes: the floor for any verifying server. */
  hmac: HttpVariantResult
  webhook: HttpVariantResult
  /** The reviewers' verifier (raw body, one HMAC, `timingSafeEqual`, `JSON.parse`); absent from runs made before it existed. */
  reference?: HttpVariantResult
  /** Median over rounds of webhook CPU/request ÷ baseline CPU/request in the same round. */
  cpuRatio: number
  cpuRatios: number[]
  /** The same for the bare-HMAC variant: how much of the target the HMAC alone uses up. */
  hmacRatio: number
  /** Median over rounds of webhook CPU/request ÷ parser + bare HMAC CPU/request: `webhook()` against the floor. */
  floorRatio: number
  floorRatios: number[]
  /** Median over rounds of webhook CPU/request ÷ the reference's in the same round. */
  referenceRatio?: number
  referenceRatios?: number[]
  /** The same for a second copy of the floor against the first: the bench's own resolution. */
  controlRatio: number
  controlRatios: number[]
}

const quick = process.argv.includes('--quick')
const only = flag('framework')
// Two load shapes, so that a win is not an artefact of one: a few busy connections, and many.
const CONNECTION_SHAPES = quick ? [10] : [10, 50]
const WARMUP_S = quick ? 0.5 : 2
const DURATION_S = quick ? 1.5 : 3
// Each server's DURATION_S at a load shape is served in slices this long, the servers in turn.
const SLICE_S = quick ? 0.5 : 1
const ROUNDS = quick ? 1 : 8

const children = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of children) child.kill()
})
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130))

/**
 * With two CPUs or more and util-linux's `taskset`, the load generator runs on the first CPU and
 * every server on the second, so the two never take turns on one core: a server's CPU per request
 * then no longer carries the cache misses and migrations of sharing one with autocannon.
 */
const PIN = availableParallelism() >= 2 && pin(process.pid, 0)
const SERVER_CPU = 1

function pin(pid: number, cpu: number): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

type Server = ForkedServer

async function startServer(framework: Framework, variant: Variant): Promise<Server> {
  const server = await forkServer(framework, variant, {
    forked: (child) => {
      children.add(child)
      child.on('exit', () => children.delete(child))
    },
  })
  if (PIN && server.child.pid !== undefined) pin(server.child.pid, SERVER_CPU)
  return server
}

async function load(server: Server, seconds: number, connections: number): Promise<Slice> {
  const before = await server.cpu()
  const result = await sendDeliveries(server, { duration: seconds }, connections)
  const after = await server.cpu()
  const totalCpuUs = after.user - before.user + (after.system - before.system)
  return { totalCpuUs, reqPerSec: result.requests.average, p99Ms: result.latency.p99, requests: result.requests.total }
}

/** One autocannon run against one server: the CPU it cost the server in all, and what it served. */
interface Slice {
  totalCpuUs: number
  reqPerSec: number
  p99Ms: number
  requests: number
}

/** A server's figures at one load shape in one round, over all its slices. */
type Load = HttpVariantResult

/** Each server loaded for DURATION_S at `connections`, in turns of SLICE_S, rotated every turn. */
async function sliced(servers: readonly Server[], connections: number): Promise<Record<Variant, Load>> {
  const turns = Array.from({ length: Math.round(DURATION_S / SLICE_S) }, (_, turn) =>
    servers.map((_, k) => servers[(k + turn) % servers.length] as Server),
  )
  const byVariant = new Map<Variant, Slice[]>(servers.map((server) => [server.variant, []]))
  for (const turn of turns) {
    for (const server of turn) byVariant.get(server.variant)?.push(await load(server, SLICE_S, connections))
  }
  const figures = {} as Record<Variant, Load>
  for (const [variant, slices] of byVariant) {
    const requests = slices.reduce((sum, s) => sum + s.requests, 0)
    figures[variant] = {
      cpuUs: slices.reduce((sum, s) => sum + s.totalCpuUs, 0) / requests,
      reqPerSec: median(slices.map((s) => s.reqPerSec)),
      p99Ms: median(slices.map((s) => s.p99Ms)),
      requests,
    }
  }
  return figures
}

/** One round: the servers started afresh, warmed, loaded at every shape in slices from `order`, stopped. */
async function round(framework: Framework, order: readonly Variant[]): Promise<Map<number, Record<Variant, Load>>> {
  const servers = await Promise.all(order.map((variant) => startServer(framework, variant)))
  try {
    for (const server of servers) await load(server, WARMUP_S, CONNECTION_SHAPES[0] as number)
    const byShape = new Map<number, Record<Variant, Load>>()
    for (const connections of CONNECTION_SHAPES) byShape.set(connections, await sliced(servers, connections))
    return byShape
  } finally {
    for (const child of children) child.kill()
  }
}

async function bench(framework: Framework): Promise<HttpResult[]> {
  const rounds: Map<number, Record<Variant, Load>>[] = []
  for (let i = 0; i < ROUNDS; i++) {
    // Rotated every round, so drift on the machine does not land on one variant.
    const order = VARIANTS.map((_, k) => VARIANTS[(k + i) % VARIANTS.length] as Variant)
    rounds.push(await round(framework, order))
  }
  return CONNECTION_SHAPES.map((connections) => {
    const runs = rounds.map((r) => r.get(connections) as Record<Variant, Load>)
    const ratios = (top: Variant, bottom: Variant) => runs.map((r) => r[top].cpuUs / r[bottom].cpuUs)
    const summary = (variant: Variant): HttpVariantResult => ({
      cpuUs: median(runs.map((r) => r[variant].cpuUs)),
      reqPerSec: median(runs.map((r) => r[variant].reqPerSec)),
      p99Ms: median(runs.map((r) => r[variant].p99Ms)),
      requests: median(runs.map((r) => r[variant].requests)),
    })
    const cpuRatios = ratios('webhook', 'baseline')
    const floorRatios = ratios('webhook', 'hmac')
    const controlRatios = ratios('control', 'hmac')
    const referenceRatios = ratios('webhook', 'reference')
    const result: HttpResult = {
      framework,
      pinned: PIN,
      connections,
      baseline: summary('baseline'),
      hmac: summary('hmac'),
      webhook: summary('webhook'),
      reference: summary('reference'),
      cpuRatio: median(cpuRatios),
      cpuRatios,
      hmacRatio: median(ratios('hmac', 'baseline')),
      floorRatio: median(floorRatios),
      floorRatios,
      referenceRatio: median(referenceRatios),
      referenceRatios,
      controlRatio: median(controlRatios),
      controlRatios,
    }
    console.error(
      `http: ${framework}, ${connections} connections: ${result.baseline.cpuUs.toFixed(1)} -> ${result.webhook.cpuUs.toFixed(1)} µs CPU/request (${result.cpuRatio.toFixed(3)}x; ` +
        `parser + bare HMAC ${result.hmacRatio.toFixed(3)}x; webhook() over that floor ${result.floorRatio.toFixed(3)}x ` +
        `[${floorRatios.map((v) => v.toFixed(2)).join(' ')}]; over the reference ${median(referenceRatios).toFixed(3)}x ` +
        `[${referenceRatios.map((v) => v.toFixed(2)).join(' ')}]; floor against a copy of itself ${result.controlRatio.toFixed(3)}x ` +
        `[${controlRatios.map((v) => v.toFixed(2)).join(' ')}]), ${result.baseline.reqPerSec.toFixed(0)} -> ${result.webhook.reqPerSec.toFixed(0)} req/s`,
    )
    return result
  })
}

const results: HttpResult[] = []
for (const framework of FRAMEWORKS) {
  if (only && only !== framework) continue
  results.push(...(await bench(framework)))
}
console.log(
  RESULT_PREFIX + JSON.stringify({ runtime: `node ${process.version}`, durationS: DURATION_S, sliceS: SLICE_S, rounds: ROUNDS, results }),
)
