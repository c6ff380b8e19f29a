/**
 * Load and soak test: every adapter, each in a server process of its own on 127.0.0.1, under
 * autocannon with a mix of valid, tampered, unsigned, oversize and Basic requests. Every answer is
 * checked against the answer its own request should get; the server's resident memory is sampled
 * after warm-up and at the end.
 *
 *   pnpm test:load                          60 s per adapter (the soak)
 *   pnpm test:load --quick                  5 s per adapter (CI)
 *   pnpm test:load --write docs/reliability.md
 *
 * Exits 1 on any wrong answer, 5xx, connection error or timeout, a non-2xx count that differs
 * from the refusals expected, or resident memory growing by 50 MiB or more; exits 3 when the run
 * overstays its time budget, after killing its servers.
 */
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { describeMix, loadRequests, newTally, type Tally } from './cases.ts'
import { type Figures, machine, type RunInfo, table, writeFigures } from './report.ts'
import { killAll, type ServerProcess, startServer } from './server-process.ts'
import { FRAMEWORK_NAMES, FRAMEWORKS, type Framework } from './settings.ts'

const MiB = 1024 * 1024
const MAX_RSS_GROWTH = 50 * MiB
const DEFAULT_ADAPTERS: readonly Framework[] = ['express5', 'koa3', 'hono']
/** Per adapter, on top of warm-up and load: server start, GC, stop, autocannon winding down. */
const OVERHEAD_SECONDS = 45
const SAMPLE_EVERY_MS = 1000

const USAGE = `usage: run.ts [--duration <s>] [--quick] [--warmup <s>] [--connections <n>]
              [--adapters ${FRAMEWORKS.join(',')}|all] [--write <file.md>]
  --duration     seconds of load per adapter after warm-up (default 60, the soak)
  --quick        5 s per adapter and 2 s warm-up, for CI
  --adapters     comma-separated (default ${DEFAULT_ADAPTERS.join(',')}; all adds Express 4 and Koa 2)
  --write        refresh the figures section of this Markdown file`

interface Settings {
  duration: number
  warmup: number
  connections: number
  adapters: Framework[]
  write: string | undefined
}

function settings(argv: string[]): Settings {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string' },
      quick: { type: 'boolean', default: false },
      connections: { type: 'string', default: '10' },
      adapters: { type: 'string' },
      write: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  })
  if (values.help) {
    console.log(USAGE)
    process.exit(0)
  }
  const number = (name: string, text: string) => {
    const value = Number(text)
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive whole number, not ${text}`)
    return value
  }
  const listed = values.adapters === 'all' ? [...FRAMEWORKS] : (values.adapters?.split(',') ?? [...DEFAULT_ADAPTERS])
  const unknown = listed.filter((name) => !FRAMEWORKS.includes(name as Framework))
  if (unknown.length > 0) throw new Error(`unknown adapter ${unknown.join(', ')}; known: ${FRAMEWORKS.join(', ')}`)
  return {
    duration: number('duration', values.duration ?? (values.quick ? '5' : '60')),
    warmup: number('warmup', values.warmup ?? (values.quick ? '2' : '5')),
    connections: number('connections', values.connections),
    adapters: listed as Framework[],
    write: values.write,
  }
}

interface Phase {
  result: autocannon.Result
  tally: Tally
}

async function load(port: number, seconds: number, connections: number): Promise<Phase> {
  const tally = newTally()
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    // One request in flight per connection keeps each answer next to the request that asked for it.
    pipelining: 1,
    duration: seconds,
    timeout: 10,
    requests: await loadRequests(tally),
  })
  return { result, tally }
}

/** Why a phase fails, beyond wrong answers and 5xx, which the figures carry themselves. */
function phaseFailures(name: string, { result, tally }: Phase): string[] {
  const failures: string[] = []
  // A refused oversize body is answered with Connection: close while the client may still be
  // sending it, and closing a socket with unread bytes can reset it before the client reads the
  // 413 (Node does no lingering close). Such resets are allowed up to 1 % of those refusals, and
  // timeouts never: a stalled connection is what the close exists to prevent.
  const allowedResets = Math.floor(tally.byCase.oversize / 100)
  if (result.timeouts > 0 || result.errors - result.timeouts > allowedResets) {
    failures.push(`${name}: ${result.errors} connection errors (${result.timeouts} timeouts; ${allowedResets} resets allowed)`)
  }
  if (result.non2xx !== tally.expectedNon2xx) {
    failures.push(`${name}: ${result.non2xx} non-2xx answers where ${tally.expectedNon2xx} refusals were expected`)
  }
  if (result.requests.total !== tally.checked) {
    failures.push(`${name}: autocannon counted ${result.requests.total} answers, ${tally.checked} were checked`)
  }
  if (tally.checked === 0) failures.push(`${name}: no answer at all`)
  for (const [kind, count] of tally.problems) failures.push(`${name}: ${count} × ${kind}`)
  return failures
}

async function measure(framework: Framework, options: Settings): Promise<Figures> {
  const adapter = FRAMEWORK_NAMES[framework]
  console.log(`\n${adapter}: starting the server`)
  const server = await startServer(framework)
  try {
    // The warm-up lets the JIT, the sockets' buffers and the heap settle, so that the memory
    // sampled afterwards is the server's steady state rather than its first minute.
    const warmup = await load(server.port, options.warmup, options.connections)
    const start = await server.memory(true)
    console.log(
      `${adapter}: warm-up ${warmup.result.requests.total} answers; RSS ${(start.rss / MiB).toFixed(1)} MiB; loading for ${options.duration} s`,
    )

    const peak = sampleWhile(server)
    const run = await load(server.port, options.duration, options.connections)
    const rssPeak = await peak.stop()
    const end = await server.memory(true)

    const wrong = warmup.tally.wrong + run.tally.wrong
    const serverErrors = warmup.tally.serverErrors + run.tally.serverErrors
    const failures = [...phaseFailures('warm-up', warmup), ...phaseFailures('load', run)]
    if (wrong > 0) failures.unshift(`${wrong} wrong answers`)
    if (serverErrors > 0) failures.unshift(`${serverErrors} 5xx answers`)
    if (end.rss - start.rss >= MAX_RSS_GROWTH) failures.push(`RSS grew by ${((end.rss - start.rss) / MiB).toFixed(1)} MiB`)
    console.log(`${adapter}: ${describeMix(run.tally)}; status ${JSON.stringify(run.result.statusCodeStats)}`)

    return {
      adapter,
      requests: run.result.requests.total,
      perSecond: run.result.requests.average,
      p99Ms: run.result.latency.p99,
      wrong,
      serverErrors,
      errors: warmup.result.errors + run.result.errors,
      rssStart: start.rss,
      rssEnd: end.rss,
      rssPeak: Math.max(rssPeak, start.rss, end.rss),
      heapStart: start.heapUsed,
      heapEnd: end.heapUsed,
      failures,
    }
  } finally {
    await server.stop()
  }
}

/** The highest RSS seen while loading, without a GC, so it includes what a collection would free. */
function sampleWhile(server: ServerProcess): { stop(): Promise<number> } {
  let peak = 0
  let pending: Promise<void> = Promise.resolve()
  const timer = setInterval(() => {
    pending = pending.then(async () => {
      peak = Math.max(peak, (await server.memory(false)).rss)
    })
  }, SAMPLE_EVERY_MS)
  return {
    async stop() {
      clearInterval(timer)
      await pending
      return peak
    },
  }
}

async function main(): Promise<number> {
  let options: Settings
  try {
    options = settings(process.argv.slice(2))
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`)
    return 2
  }

  // A hung server or client must not hold CI: past the budget the run kills its servers and exits.
  const budgetSeconds = options.adapters.length * (options.warmup + options.duration + OVERHEAD_SECONDS)
  setTimeout(() => {
    console.error(`load test: still running after ${budgetSeconds} s; giving up`)
    killAll()
    process.exit(3)
  }, budgetSeconds * 1000).unref()

  const host = machine()
  console.log(host)
  const began = performance.now()
  const rows: Figures[] = []
  for (const framework of options.adapters) rows.push(await measure(framework, options))
  const elapsedSeconds = (performance.now() - began) / 1000

  console.log(`\n${table(rows)}\n`)
  const failures = rows.flatMap((row) => row.failures.map((failure) => `${row.adapter}: ${failure}`))
  for (const failure of failures) console.error(`FAIL ${failure}`)
  console.log(failures.length === 0 ? `load test passed in ${elapsedSeconds.toFixed(0)} s` : 'load test FAILED')

  if (options.write !== undefined) {
    const info: RunInfo = {
      machine: host,
      command: reproduceCommand(options),
      durationSeconds: options.duration,
      warmupSeconds: options.warmup,
      connections: options.connections,
      elapsedSeconds,
    }
    await writeFigures(options.write, rows, info)
    console.log(`figures written to ${options.write}`)
  }
  return failures.length === 0 ? 0 : 1
}

function reproduceCommand(options: Settings): string {
  const args = ['pnpm test:load', `--duration ${options.duration}`]
  if (options.adapters.join(',') !== DEFAULT_ADAPTERS.join(',')) args.push(`--adapters ${options.adapters.join(',')}`)
  if (options.warmup !== 5) args.push(`--warmup ${options.warmup}`)
  if (options.connections !== 10) args.push(`--connections ${options.connections}`)
  args.push(`--write ${options.write}`)
  return args.join(' ')
}

for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.on(signal, () => {
    killAll()
    process.exit(code)
  })
}
process.on('exit', killAll)

main().then(
  (code) => {
    process.exitCode = code
    // A socket autocannon left half-closed must not keep a finished run alive; the grace lets
    // piped output drain first.
    setTimeout(() => process.exit(code), 2000).unref()
  },
  (error: unknown) => {
    console.error(error)
    killAll()
    process.exitCode = 1
  },
)
