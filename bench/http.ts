/**
 * Target 4: per framework, server CPU per request with `webhook()` against the framework's usual
 * JSON parser, 1 KiB signed deliveries over loopback. Start it through run.ts, or alone:
 * `tsx bench/http.ts [--quick]`.
 *
 * The load generator (autocannon) runs here and each server in a child process, so the CPU the
 * child reports is the server's alone. CPU per request is the primary figure: on two cores both
 * processes compete, so req/s moves with whatever else the machine does, while the CPU a request
 * costs the server moves much less. The three servers of a framework (see http-server.ts) stay up
 * and are loaded in turns, the order rotated every round, and each round's ratios divide figures
 * taken a minute apart at most.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { sign } from '@hookguard/core'
import { makePayload } from '@hookguard/testkit/payload'
import { FRAMEWORKS, type Framework, PATH, SECRET, type ServerMessage, VARIANTS, type Variant } from './http-server.ts'
import { median, RESULT_PREFIX } from './measure.ts'

interface AutocannonResult {
  requests: { total: number; average: number }
  latency: { p99: number }
  non2xx: number
  errors: number
  timeouts: number
}
type Autocannon = (options: {
  url: string
  method: 'POST'
  headers: Record<string, string>
  body: string
  connections: number
  pipelining: number
  duration: number
}) => Promise<AutocannonResult>

export interface HttpVariantResult {
  /** Medians over the rounds. */
  cpuUs: number
  reqPerSec: number
  p99Ms: number
  requests: number
}

export interface HttpResult {
  framework: Framework
  /** The load shape: autocannon's concurrent connections. */
  connections: number
  baseline: HttpVariantResult
  /** The parser plus one bare HMAC of the raw bytes: the floor for any verifying server. */
  hmac: HttpVariantResult
  webhook: HttpVariantResult
  /** Median over rounds of webhook CPU/request ÷ baseline CPU/request in the same round. */
  cpuRatio: number
  cpuRatios: number[]
  /** The same for the bare-HMAC variant: how much of the target the HMAC alone uses up. */
  hmacRatio: number
  /** Median over rounds of webhook CPU/request ÷ parser + bare HMAC CPU/request: `webhook()` against the floor. */
  floorRatio: number
  floorRatios: number[]
}

const quick = process.argv.includes('--quick')
const only = process.argv.find((a) => a.startsWith('--framework='))?.slice('--framework='.length)
// Two load shapes, so that a win is not an artefact of one: a few busy connections, and many.
const CONNECTION_SHAPES = quick ? [10] : [10, 50]
const WARMUP_S = quick ? 0.5 : 3
const DURATION_S = quick ? 1.5 : 6
const ROUNDS = quick ? 1 : 4

// No declarations for autocannon are installed; a variable specifier keeps TypeScript from looking.
const autocannonSpecifier: string = 'autocannon'
const autocannon = (await import(autocannonSpecifier)).default as Autocannon
const children = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of children) child.kill()
})
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130))

interface Server {
  variant: Variant
  url: string
  cpu(): Promise<NodeJS.CpuUsage>
}

function startServer(framework: Framework, variant: Variant): Promise<Server> {
  // The child inherits this process's execArgv (tsx's loader), and no source condition: it runs
  // the adapters' and the core's builds, as users do.
  const child = fork(new URL('./http-server.ts', import.meta.url), [framework, variant], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  children.add(child)
  child.on('exit', () => children.delete(child))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`http: ${framework} ${variant} did not start`)), 20_000)
    child.once('error', reject)
    child.once('message', (message: ServerMessage) => {
      clearTimeout(timer)
      if (!('port' in message)) return reject(new Error('http: unexpected first message'))
      resolve({
        variant,
        url: `http://127.0.0.1:${message.port}${PATH}`,
        cpu: () =>
          new Promise((done) => {
            child.once('message', (reply: ServerMessage) => {
              if ('cpu' in reply) done(reply.cpu)
            })
            child.send('cpu')
          }),
      })
    })
  })
}

const payload = makePayload('gson', 1024, '1 KiB')
const headers = {
  'content-type': 'application/json',
  'x-service-hmac-signature': await sign(payload.bytes, SECRET),
}

async function load(server: Server, seconds: number, connections: number) {
  const before = await server.cpu()
  const result = await autocannon({
    url: server.url,
    method: 'POST',
    headers,
    body: payload.text,
    connections,
    pipelining: 1,
    duration: seconds,
  })
  const after = await server.cpu()
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0 || result.requests.total === 0) {
    throw new Error(
      `http: ${server.url} (${server.variant}): ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
    )
  }
  const cpuUs = after.user - before.user + (after.system - before.system)
  return {
    cpuUs: cpuUs / result.requests.total,
    reqPerSec: result.requests.average,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
  }
}

async function bench(framework: Framework, connections: number): Promise<HttpResult> {
  const servers = Object.fromEntries(
    await Promise.all(VARIANTS.map(async (variant) => [variant, await startServer(framework, variant)] as const)),
  ) as Record<Variant, Server>
  try {
    for (const server of Object.values(servers)) await load(server, WARMUP_S, connections)
    const runs: Record<Variant, Awaited<ReturnType<typeof load>>[]> = { baseline: [], hmac: [], webhook: [] }
    const ratios: number[] = []
    const hmacRatios: number[] = []
    const floorRatios: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      // Rotated every round, so drift on the machine does not land on one variant.
      const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length] as Variant)
      for (const variant of order) runs[variant].push(await load(servers[variant], DURATION_S, connections))
      const cpu = (variant: Variant) => runs[variant][round]?.cpuUs as number
      ratios.push(cpu('webhook') / cpu('baseline'))
      hmacRatios.push(cpu('hmac') / cpu('baseline'))
      floorRatios.push(cpu('webhook') / cpu('hmac'))
    }
    const summary = (variant: Variant): HttpVariantResult => ({
      cpuUs: median(runs[variant].map((r) => r.cpuUs)),
      reqPerSec: median(runs[variant].map((r) => r.reqPerSec)),
      p99Ms: median(runs[variant].map((r) => r.p99Ms)),
      requests: median(runs[variant].map((r) => r.requests)),
    })
    const result: HttpResult = {
      framework,
      connections,
      baseline: summary('baseline'),
      hmac: summary('hmac'),
      webhook: summary('webhook'),
      cpuRatio: median(ratios),
      cpuRatios: ratios,
      hmacRatio: median(hmacRatios),
      floorRatio: median(floorRatios),
      floorRatios,
    }
    console.error(
      `http: ${framework}, ${connections} connections: ${result.baseline.cpuUs.toFixed(1)} -> ${result.webhook.cpuUs.toFixed(1)} µs CPU/request (${result.cpuRatio.toFixed(3)}x; ` +
        `parser + bare HMAC ${result.hmacRatio.toFixed(3)}x; webhook() over that floor ${result.floorRatio.toFixed(3)}x), ` +
        `${result.baseline.reqPerSec.toFixed(0)} -> ${result.webhook.reqPerSec.toFixed(0)} req/s`,
    )
    return result
  } finally {
    for (const child of children) child.kill()
  }
}

const results: HttpResult[] = []
for (const framework of FRAMEWORKS) {
  if (only && only !== framework) continue
  for (const connections of CONNECTION_SHAPES) results.push(await bench(framework, connections))
}
console.log(RESULT_PREFIX + JSON.stringify({ runtime: `node ${process.version}`, durationS: DURATION_S, rounds: ROUNDS, results }))
