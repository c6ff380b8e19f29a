/**
 * Target 4, floor, counted rather than timed: the HTTP bench's floor server, its reference verifier
 * and `webhook()`, two processes of each, run under Valgrind's callgrind, which counts what the server process makes
 * the processor do and simulates its caches and branch predictor. Start it through run.ts, or
 * alone: `tsx bench/instructions.ts [--quick]`. Needs Valgrind (Debian's `valgrind` package).
 *
 * Why a second reading: on a shared host the CPU time of a request swings by more than the 5 %
 * that target 4, floor, allows (http.ts's control server shows how much), while the work the
 * request makes the processor do moves far less. Two things to keep in mind when reading it:
 * callgrind counts user space only, so the kernel's share of each request (the same for every
 * server) is left out and these ratios are stricter than the CPU ratios; and a simulated cycle is
 * an estimate, KCachegrind's: one per instruction, ten per first-level cache miss and per
 * mispredicted branch, a hundred per last-level miss.
 *
 * `--keep=DIR` keeps callgrind's files there, to read per function with `callgrind_annotate`;
 * `--last-level=BYTES` sets the simulated last level's size (32 MiB, a last-level cache's; this
 * host's second level, 1 MiB, asks what a request's misses there cost, which the default leaves out);
 * `--warmup=N` and `--requests=N` set the two phases' requests (`--quick`'s 200 do not let the JIT
 * settle: its counts are a smoke test, several times a warmed server's, and of Koa only).
 *
 * Method: per framework, the six servers start together under callgrind with counting off, are
 * warmed, and then counted over the same number of requests at 10 connections, after which each
 * process exits and callgrind writes its totals. The ratio is between the means of the two copies;
 * the two copies of the floor against each other are this method's own spread. No collection is
 * forced before the window: a forced one shrinks V8's young generation, and the window then pays
 * for collecting it far more often than a running server does.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { flag, numberFlag } from './flags.ts'
import { forkServer, sendDeliveries } from './http-fork.ts'
import { FRAMEWORKS, type Framework, type Variant } from './http-server.ts'
import { RESULT_PREFIX } from './measure.ts'

/** Per request, over the counted window. */
export interface CountedVariant {
  instructions: number
  /** First-level misses, instruction and data (reads and writes). */
  l1Misses: number
  /** Last-level misses. */
  llMisses: number
  mispredicts: number
  /** instructions + 10 × (l1Misses + mispredicts) + 100 × llMisses. */
  cycles: number
}

export interface InstructionsResult {
  framework: Framework
  /** Means over the copies. */
  hmac: CountedVariant
  webhook: CountedVariant
  /** The reviewers' verifier (raw body, one HMAC, `timingSafeEqual`, `JSON.parse`); absent from runs made before it was counted. */
  reference?: CountedVariant
  /** Each process's own counts. */
  copies: { hmac: CountedVariant[]; webhook: CountedVariant[]; reference?: CountedVariant[] }
  /** webhook ÷ hmac, in simulated cycles and in instructions. */
  floorRatio: number
  floorInstructionRatio: number
  /** webhook ÷ reference, in simulated cycles and in instructions. */
  referenceRatio?: number
  referenceInstructionRatio?: number
  /** The floor's second copy ÷ its first, in simulated cycles: how far two processes of one server stray. */
  controlRatio: number
}

const quick = process.argv.includes('--quick')
const only = flag('framework')
// The warm-up lets the JIT settle; the window is long enough that a collection more or less moves
// a count by a percent. After 4 000 requests the optimising compiler still ran 57 to 85 k
// instructions a request in Koa's window, more for the path with more functions, which then ran
// as baseline code: the count was of a server's warm-up (bench/notes.md, 2026-12-01, evening).
// After 30 000 it ran 30 to 45 k for every server. Koa's six take about ten minutes so.
const WARMUP = numberFlag('warmup') ?? (quick ? 200 : 30_000)
const REQUESTS = numberFlag('requests') ?? (quick ? 200 : 5000)
const LAST_LEVEL = numberFlag('last-level') ?? 32 * 1024 * 1024
const CONNECTIONS = 10
const COUNTED = ['hmac', 'reference', 'webhook'] as const satisfies readonly Variant[]
// One process counts up to 3 % more or less than another of the same code (where the JIT and the
// collector happened to act), so each server runs twice and the ratio is between their means.
const COPIES = 2

try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' })
} catch {
  throw new Error('instructions: Valgrind is not installed (apt-get install -y valgrind)')
}

const keep = flag('keep')
const outDir = keep === undefined ? mkdtempSync(join(tmpdir(), 'hookguard-callgrind-')) : resolve(keep)
if (keep === undefined) process.on('exit', () => rmSync(outDir, { recursive: true, force: true }))
else mkdirSync(outDir, { recursive: true })

interface CountedServer {
  variant: (typeof COUNTED)[number]
  pid: number
  url: string
  outFile: string
  stop(): Promise<void>
}

async function startCounted(framework: Framework, variant: CountedServer['variant'], copy: number): Promise<CountedServer> {
  const outFile = join(outDir, `${framework}-${variant}-${copy}.out`)
  const callgrind = ['--tool=callgrind', '--instr-atstart=no', '--cache-sim=yes', '--branch-sim=yes', '-q']
  // JIT code is written and then run: callgrind must look for code changed anywhere but in files.
  callgrind.push('--smc-check=all-non-file', `--callgrind-out-file=${outFile}`)
  // Fixed simulated caches, the sizes of the host these figures were first taken on (AMD EPYC: 32
  // KiB first-level, 32 MiB last-level), so that counts from two machines compare. A last level
  // smaller than V8's young generation (8 MiB in these servers) makes its misses jump between two
  // processes of the same code, as the nursery happens to fit or not.
  callgrind.push('--I1=32768,8,64', '--D1=32768,8,64', `--LL=${LAST_LEVEL},16,64`)
  // The server runs as http.ts runs it (tsx's loader from our execArgv, the packages' builds).
  let exited: Promise<void> = Promise.resolve()
  const server = await forkServer(framework, variant, {
    execPath: 'valgrind',
    execArgv: [...callgrind, process.execPath, ...process.execArgv],
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    startTimeoutMs: 300_000,
    forked: (child) => {
      exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
      // Valgrind warns at every start that it cannot model the host's last level; the sizes above stand in.
      child.stderr?.on('data', (chunk: Buffer) => {
        const lines = chunk.toString().split('\n')
        const kept = lines.filter(
          (line) => line !== '' && !/^--\d+-- warning: (L3 cache found|specified LL cache|simulated LL cache)/.test(line),
        )
        if (kept.length > 0) process.stderr.write(`${kept.join('\n')}\n`)
      })
    },
  })
  return {
    ...server,
    pid: server.child.pid as number,
    outFile,
    stop: () => {
      // A signal, not a disconnect: callgrind writes its totals as the process exits.
      server.child.kill('SIGTERM')
      return exited
    },
  }
}

const send = async (server: CountedServer, amount: number) => (await sendDeliveries(server, { amount }, CONNECTIONS, 120)).requests.total

const counting = (server: CountedServer, on: boolean) =>
  execFileSync('callgrind_control', ['--instr', on ? 'on' : 'off', String(server.pid)], { stdio: 'ignore' })

/** callgrind's totals line, per request. */
function perRequest(outFile: string, requests: number): CountedVariant {
  const text = readFileSync(outFile, 'utf8')
  const names = /^events: (.*)$/m.exec(text)?.[1]?.split(' ')
  const totals = /^totals: (.*)$/m.exec(text)?.[1]?.split(' ').map(Number)
  if (names === undefined || totals === undefined) throw new Error(`instructions: no totals in ${outFile}`)
  const event = (name: string) => (totals[names.indexOf(name)] ?? Number.NaN) / requests
  const l1Misses = event('I1mr') + event('D1mr') + event('D1mw')
  const llMisses = event('ILmr') + event('DLmr') + event('DLmw')
  const mispredicts = event('Bcm') + event('Bim')
  const instructions = event('Ir')
  return { instructions, l1Misses, llMisses, mispredicts, cycles: instructions + 10 * (l1Misses + mispredicts) + 100 * llMisses }
}

async function count(framework: Framework): Promise<InstructionsResult> {
  const started = COUNTED.flatMap((variant) => Array.from({ length: COPIES }, (_, copy) => startCounted(framework, variant, copy)))
  const servers = await Promise.all(started)
  const copies: Required<InstructionsResult['copies']> = { hmac: [], webhook: [], reference: [] }
  try {
    // Each server's counts are kept in its place, so that copy 0 and copy 1 stay apart.
    const counted = await Promise.all(
      servers.map(async (server) => {
        await send(server, WARMUP)
        counting(server, true)
        const requests = await send(server, REQUESTS)
        counting(server, false)
        await server.stop()
        return perRequest(server.outFile, requests)
      }),
    )
    for (const [k, server] of servers.entries()) copies[server.variant].push(counted[k] as CountedVariant)
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
  }
  const hmac = meanOf(copies.hmac)
  const webhook = meanOf(copies.webhook)
  const reference = meanOf(copies.reference)
  const [first, second] = copies.hmac as [CountedVariant, CountedVariant]
  const result: InstructionsResult = {
    framework,
    hmac,
    webhook,
    reference,
    copies,
    floorRatio: webhook.cycles / hmac.cycles,
    floorInstructionRatio: webhook.instructions / hmac.instructions,
    referenceRatio: webhook.cycles / reference.cycles,
    referenceInstructionRatio: webhook.instructions / reference.instructions,
    controlRatio: second.cycles / first.cycles,
  }
  console.error(
    `instructions: ${framework}: ${hmac.cycles.toFixed(0)} -> ${webhook.cycles.toFixed(0)} simulated cycles/request ` +
      `(webhook() over the floor ${result.floorRatio.toFixed(3)}x, in instructions ${result.floorInstructionRatio.toFixed(3)}x; ` +
      `over the reference (${reference.cycles.toFixed(0)}) ${result.referenceRatio?.toFixed(3)}x, in instructions ${result.referenceInstructionRatio?.toFixed(3)}x; ` +
      `two copies of the floor ${result.controlRatio.toFixed(3)}x, of webhook() ` +
      `${((copies.webhook[1] as CountedVariant).cycles / (copies.webhook[0] as CountedVariant).cycles).toFixed(3)}x)`,
  )
  return result
}

function meanOf(counts: readonly CountedVariant[]): CountedVariant {
  const mean = (pick: (c: CountedVariant) => number) => counts.reduce((sum, c) => sum + pick(c), 0) / counts.length
  return {
    instructions: mean((c) => c.instructions),
    l1Misses: mean((c) => c.l1Misses),
    llMisses: mean((c) => c.llMisses),
    mispredicts: mean((c) => c.mispredicts),
    cycles: mean((c) => c.cycles),
  }
}

/**
 * `--quick` is CI's smoke test of this method, whose counts it does not keep: one framework, Koa's
 * (the one whose target is still missed), since each starts six servers under callgrind and the
 * four took six of CI's minutes.
 */
const QUICK_FRAMEWORK: Framework = 'koa3'
const results: InstructionsResult[] = []
for (const framework of FRAMEWORKS) {
  if (only ? only !== framework : quick && framework !== QUICK_FRAMEWORK) continue
  results.push(await count(framework))
}
console.log(
  RESULT_PREFIX +
    JSON.stringify({ runtime: `node ${process.version}`, warmup: WARMUP, requests: REQUESTS, connections: CONNECTIONS, results }),
)
