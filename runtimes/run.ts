import { spawn } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { bundleForNode, bundleWorker } from './bundle.ts'
import { parseArgs } from './suite/args.ts'
import { MOCK_APP } from './suite/mock-app.ts'

// `pnpm test:runtimes` (after `pnpm build`): the runtime matrix of issues 6 and 8.
//
//   Node 22, 24    vitest's conformance project (Express, Koa, Fastify, Hono, a Fetch handler); with --all, every project
//   Node 24, Web   the core's Web build (the `worker` condition): its stripper (the WebAssembly kernel compiled
//                  from bytes; with --jitless, the portable JavaScript), Web Crypto's copy at the call, the
//                  service's signatures (node-web.ts, bundled, since --jitless cannot strip types)
//   Bun, Deno      core vectors, the conformance table in process (Hono, fetch handler), the client: once on
//                  the core build the runtime picks itself (node), once with the Worker
//                  condition (web); each asserts which build it loaded. Then both apps
//                  behind the runtime's own server (Bun.serve, Deno.serve) over a raw socket:
//                  Content-Length as its parser passes it on, and the connection after a refusal
//   workerd        the same inside a Worker (the edge build, its kernel from the strip.wasm module the bundle
//                  links in; no nodejs_compat), and the table over HTTP;
//                  then, in a Worker of its own, the Durable Object dedupe store (@hookguard/cloudflare)
//                  behind the Hono app and a fetch handler: concurrent copies, failing handlers,
//                  objects and workerd restarted, alarms (dedupe-workerd.ts); and the hand-off to a Cloudflare
//                  Queue with its consumer and dead-letter queue, counted per delivery (queues-workerd.ts)
//
// Node 20 is `pnpm test`. Options: --only=bun,deno (runtime names; node-web for Node's Web-build jobs alone), --all (every vitest project),
// --timeout=<seconds for the whole run, default 600>, --keep (keep the bundle and logs), --verbose.

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.dirname(here)
const bin = (pkg: string, file: string) => path.join(here, 'node_modules', pkg, file)
const version = (pkg: string) => (JSON.parse(readFileSync(bin(pkg, 'package.json'), 'utf8')) as { version: string }).version

const args = parseArgs(process.argv.slice(2).map((arg) => (arg.includes('=') ? arg : `${arg}=`)))
const only = args.only?.split(',').filter(Boolean)
const deadline = Date.now() + Number(args.timeout ?? 600) * 1000

/** What every child needs: no colours in logs, and no runtime phoning home for updates. */
const quiet = { NO_COLOR: '1', FORCE_COLOR: '0', DENO_NO_UPDATE_CHECK: '1', DO_NOT_TRACK: '1' }

interface Job {
  runtime: string
  build: 'src' | 'node' | 'web' | 'edge'
  suite: string
  /** Jobs in one lane run one after another; the two lanes run side by side (two cores). */
  lane: 'vitest' | 'checks'
  command: string
  args: string[]
  cwd: string
  env?: Record<string, string>
  timeout: number
  /** Runs the bundled Worker (`{worker}` in `args`); fails if bundling did. */
  needsWorker?: true
  /** Runs the bundled node-web.ts (`{node-web}` in `args`); fails if bundling did. */
  needsNodeWeb?: true
  /** Passed and failed counts, from the output or the files it wrote. */
  count(output: string): Promise<Counts | undefined>
}

interface Counts {
  passed: number
  failed: number
}

interface Result {
  job: Job
  status: 'passed' | 'failed' | 'timed out' | 'not run'
  counts?: Counts
  seconds: number
  log: string
  note?: string
}

const REQUIRED_DIST = [
  'core/dist/node/index.js',
  'core/dist/web/index.js',
  'core/dist/edge/index.js',
  'hono/dist/index.js',
  'fetch/dist/index.js',
  'cloudflare/dist/index.js',
  'client/dist/index.js',
  'emulator/dist/index.js',
]
const missing = REQUIRED_DIST.filter((file) => !existsSync(path.join(root, 'packages', file)))
if (missing.length > 0) {
  console.error(`runtimes: run \`pnpm build\` first (missing packages/${missing.join(', packages/')})`)
  process.exit(1)
}

const running = new Set<number>()
const killAll = (signal: NodeJS.Signals) => {
  for (const pid of running) {
    try {
      // Each child leads its own process group, so vitest's workers and workerd go with it.
      process.kill(-pid, signal)
    } catch {}
  }
}
process.on('exit', () => killAll('SIGKILL'))
// Whatever hangs (bundling, the mock service, a child that ignores its own timer), the run ends.
setTimeout(
  () => {
    console.error('runtimes: the whole run ran out of time; stopping every runtime')
    killAll('SIGKILL')
    process.exit(1)
  },
  deadline - Date.now() + 15_000,
).unref()

const started = Date.now()
const out = await mkdtemp(path.join(tmpdir(), 'hookguard-runtimes-'))
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killAll('SIGKILL')
    if (args.keep === undefined) rmSync(out, { recursive: true, force: true })
    process.exit(signal === 'SIGINT' ? 130 : 143)
  })
}
const { mockService } = await import('@hookguard/emulator')
const mock = await mockService(MOCK_APP)

let worker: string | undefined
let bundleError: string | undefined
try {
  worker = await bundleWorker(out)
} catch (error) {
  bundleError = error instanceof Error ? error.message : String(error)
}
let nodeWeb: string | undefined
let nodeWebError: string | undefined
try {
  nodeWeb = await bundleForNode(out, 'node-web.ts')
} catch (error) {
  nodeWebError = error instanceof Error ? error.message : String(error)
}

// A runtime's name picks all its jobs; `node-web` (name-build) picks the one build's.
const picked = (job: Job, name: string) => job.runtime.startsWith(name) || `${job.runtime.split(' ')[0]}-${job.build}` === name
const jobs = matrix().filter((job) => only === undefined || only.some((name) => picked(job, name)))
// The lanes one after the other: the Vitest lane's cost checks judge CPU-time ratios, which the
// other lane's runtimes beside it on two cores pushed past their bound (a linear path read 8.7×
// against 8 in CI's run, while Bun, Deno and workerd ran).
const results: Result[][] = []
for (const lane of ['vitest', 'checks'] as const) {
  const done: Result[] = []
  for (const job of jobs.filter((candidate) => candidate.lane === lane)) {
    const result = await run(job)
    const counts = result.counts === undefined ? '' : ` (${result.counts.passed} passed, ${result.counts.failed} failed)`
    console.log(`${result.status}: ${job.runtime}, ${job.build} build${counts}, ${result.seconds.toFixed(1)}s`)
    done.push(result)
  }
  results.push(done)
}
await mock.close()

const ordered = jobs.map((job) => results.flat().find((result) => result.job === job) as Result)
for (const result of ordered) {
  const failed = result.status !== 'passed'
  if (!failed && args.verbose === undefined) continue
  console.log(`\n── ${result.job.runtime} (${result.job.build}): ${result.job.suite} ${failed ? `— ${result.status}` : ''}`)
  const lines = result.log.trimEnd().split('\n')
  console.log((failed && args.verbose === undefined ? lines.slice(-60) : lines).join('\n'))
  if (result.note !== undefined) console.log(result.note)
}
printSummary(ordered)

const ok = ordered.length > 0 && ordered.every((result) => result.status === 'passed')
if (ok && args.keep === undefined) await rm(out, { recursive: true, force: true })
else console.log(`Worker bundle and logs: ${out}`)
process.exit(ok ? 0 : 1)

function matrix(): Job[] {
  const closingLine = async (output: string): Promise<Counts | undefined> => {
    const match = [...output.matchAll(/^.+: (\d+) passed, (\d+) failed$/gm)].at(-1)
    return match === undefined ? undefined : { passed: Number(match[1]), failed: Number(match[2]) }
  }
  const portable = 'core vectors, Hono and fetch handler tables in process, client'
  const bun = bin('bun', 'bin/bun.exe')
  const deno = bin('deno', 'deno')
  // Env for vitest's `expect` (the table's matchers), read for the build's identity check, and
  // the network only on loopback, for the mock service.
  const denoFlags = ['run', '--no-prompt', '--no-lock', '--allow-env', `--allow-read=${root}`, '--allow-net=127.0.0.1']
  const mockArg = `--mock=${mock.url}`

  const vitest = (name: 'node22' | 'node24'): Job => {
    const node = bin(name, 'bin/node')
    const report = path.join(out, `vitest-${name}.json`)
    return {
      runtime: `node ${version(name)}`,
      build: 'src',
      suite:
        args.all === undefined ? 'vitest: conformance project (Express, Koa, Fastify, Hono, a Fetch handler)' : 'vitest: every project',
      lane: 'vitest',
      command: node,
      args: [
        path.join(root, 'node_modules/vitest/vitest.mjs'),
        'run',
        ...(args.all === undefined ? ['--project=conformance'] : []),
        '--reporter=dot',
        '--reporter=json',
        `--outputFile.json=${report}`,
      ],
      cwd: root,
      // Whatever the suite starts as `node` is this Node too.
      env: { PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` },
      // The conformance project runs the wire, property and complexity suites: about 160 s here.
      timeout: 300_000,
      async count() {
        if (!existsSync(report)) return undefined
        const json = JSON.parse(await readFile(report, 'utf8')) as { numPassedTests: number; numFailedTests: number }
        return { passed: json.numPassedTests, failed: json.numFailedTests }
      },
    }
  }
  const checks = (runtime: string, build: 'node' | 'web' | 'edge', command: string, argv: string[], needsWorker = false): Job => ({
    runtime,
    build,
    suite: needsWorker ? `${portable}; both tables over HTTP` : `${portable}; both on its server (raw socket)`,
    lane: 'checks',
    command,
    args: argv,
    cwd: here,
    timeout: 60_000,
    ...(needsWorker ? { needsWorker } : {}),
    count: closingLine,
  })

  const webOnNode = (jitless: boolean): Job => ({
    runtime: `node ${version('node24')}${jitless ? ' --jitless' : ''}`,
    build: 'web',
    suite: `the stripper (${jitless ? 'JavaScript, no WebAssembly' : 'WebAssembly from bytes'}), Web Crypto's copy at the call, core vectors`,
    lane: 'checks',
    command: bin('node24', 'bin/node'),
    args: [...(jitless ? ['--jitless'] : []), '{node-web}', `--stripper=${jitless ? 'js' : 'wasm-bytes'}`],
    cwd: here,
    timeout: 60_000,
    needsNodeWeb: true,
    count: closingLine,
  })

  return [
    vitest('node22'),
    vitest('node24'),
    webOnNode(false),
    webOnNode(true),
    checks(`bun ${version('bun')}`, 'node', bun, ['check.ts', '--build=node', mockArg]),
    checks(`bun ${version('bun')}`, 'web', bun, ['--conditions=worker', 'check.ts', '--build=web', mockArg]),
    checks(`deno ${version('deno')}`, 'node', deno, [...denoFlags, 'check.ts', '--build=node', mockArg]),
    checks(`deno ${version('deno')}`, 'web', deno, [...denoFlags, '--conditions=worker', 'check.ts', '--build=web', mockArg]),
    checks(
      `workerd (miniflare ${version('miniflare')})`,
      'edge',
      bin('node24', 'bin/node'),
      [path.join(here, 'workerd.ts'), '--worker={worker}', mockArg],
      true,
    ),
    {
      runtime: `workerd (miniflare ${version('miniflare')})`,
      build: 'edge',
      suite: 'Durable Object dedupe: Hono and fetch handler over HTTP, concurrent copies, objects and workerd restarted, alarms',
      lane: 'checks',
      command: bin('node24', 'bin/node'),
      args: [path.join(here, 'dedupe-workerd.ts')],
      cwd: here,
      // About 15 s here; a claim orphaned by a restart holds its delivery for processingTtl (2 s).
      timeout: 120_000,
      count: closingLine,
    },
    {
      runtime: `workerd (miniflare ${version('miniflare')})`,
      build: 'edge',
      suite:
        'Cloudflare Queues hand-off: queued once, consumed once, retries, the dead-letter queue, concurrent copies, an unreachable queue',
      lane: 'checks',
      command: bin('node24', 'bin/node'),
      args: [path.join(here, 'queues-workerd.ts')],
      cwd: here,
      // 12 to 24 s here: the consumer’s retries are immediate, its batches sent at once.
      timeout: 120_000,
      count: closingLine,
    },
  ]
}

async function run(job: Job): Promise<Result> {
  if (job.needsWorker && worker === undefined) {
    return { job, status: 'failed', seconds: 0, log: `bundling the Worker failed: ${bundleError}` }
  }
  if (job.needsNodeWeb && nodeWeb === undefined) {
    return { job, status: 'failed', seconds: 0, log: `bundling node-web.ts failed: ${nodeWebError}` }
  }
  const budget = Math.min(job.timeout, deadline - Date.now())
  if (budget <= 0) return { job, status: 'not run', seconds: 0, log: 'the whole run ran out of time first' }
  const argv = job.args.map((arg) => arg.replace('{worker}', worker ?? '').replace('{node-web}', nodeWeb ?? ''))
  const begin = Date.now()
  const child = spawn(job.command, argv, {
    cwd: job.cwd,
    env: { ...process.env, ...quiet, ...job.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  if (child.pid !== undefined) running.add(child.pid)
  let log = ''
  child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')))
  child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')))
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
  }, budget)
  const code = await new Promise<number | null>((resolve) => {
    child.on('error', (error) => {
      log += `\n${error.message}`
      resolve(null)
    })
    child.on('close', resolve)
  })
  clearTimeout(timer)
  if (child.pid !== undefined) running.delete(child.pid)
  const seconds = (Date.now() - begin) / 1000
  // Numbered: one runtime may run several jobs on one build (workerd's three).
  const number = String(jobs.indexOf(job) + 1).padStart(2, '0')
  await writeFile(path.join(out, `${number}-${job.runtime.replace(/\W+/g, '-')}-${job.build}.log`), log)
  const counts = await job.count(log).catch(() => undefined)
  const passed = !timedOut && code === 0 && counts !== undefined && counts.failed === 0 && counts.passed > 0
  const status = timedOut ? 'timed out' : passed ? 'passed' : 'failed'
  return {
    job,
    status,
    seconds,
    log,
    ...(counts === undefined ? {} : { counts }),
    ...(timedOut ? { note: `killed after ${budget / 1000}s` } : {}),
  }
}

function printSummary(list: readonly Result[]): void {
  const rows = list.map(({ job, status, counts, seconds }) => [
    job.runtime,
    job.build,
    job.suite,
    counts === undefined ? status : `${status}: ${counts.passed} passed, ${counts.failed} failed`,
    `${seconds.toFixed(1)}s`,
  ])
  const table = [['runtime', 'build', 'suite', 'result', 'time'], ...rows]
  const widths = table[0]?.map((_, column) => Math.max(...table.map((row) => (row[column] as string).length))) ?? []
  console.log('')
  for (const row of table)
    console.log(
      row
        .map((cell, column) => cell.padEnd(widths[column] as number))
        .join('  ')
        .trimEnd(),
    )
  console.log(
    `\nruntimes: ${list.filter((result) => result.status === 'passed').length}/${list.length} passed in ${((Date.now() - started) / 1000).toFixed(1)}s`,
  )
}
