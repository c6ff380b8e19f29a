/**
 * Turns the figures into the tables (printed by every run), docs/benchmarks.md and the chart.
 * The targets live here, next to the text that judges them, so the page and the check agree.
 */

import { UNICODE_HMACS_PER_SECRET } from '@hookguard/testkit/entry-points'
import { SHAPE_LABELS, type Shape } from '@hookguard/testkit/payload'
import type { EntryResult, RefusalFigure, RefusalResult, UnderAttackResult, UnitFigure, UnitsResult } from './adversarial.ts'
import type { Figures } from './figures.ts'
import type { ProcessCpu } from './handoff.ts'
import type { HttpResult } from './http.ts'
import type { InstructionsResult } from './instructions.ts'
import type { CandidateResult, PayloadResult } from './measure.ts'
import type { OpenLoopResult } from './open-loop.ts'

const PEERS = ['octokit', 'stripe', 'standardwebhooks', 'svix'] as const
const PEER_LABELS: Record<string, string> = {
  hookguard: 'hookguard',
  octokit: '@octokit/webhooks-methods',
  stripe: 'stripe',
  standardwebhooks: 'standardwebhooks',
  svix: 'svix',
}

/** Target 1: the Node build's ratio to the bare HMAC, per shape and size. */
const NODE_TARGETS: Record<string, number> = {
  'compact-1KiB': 1.3,
  'compact-64KiB': 1.05,
  'compact-1MiB': 1.05,
  'pretty-64KiB': 1.5,
  'pretty-1MiB': 1.5,
}
/**
 * Target 2: the Web build's ratio to the runtime's own `crypto.subtle.sign` (the edge build's
 * inside workerd): compact bodies within 1.2× on Node 24, Bun and Deno; every shape at 64 KiB and
 * 1 MiB within 1.5× inside workerd, and the bodies with whitespace within 1.5× on the three others.
 */
const WEB_TARGET = 1.2
const WEB_TARGET_RUNTIMES = ['node v24', 'bun', 'deno']
const WEB_STRIP_TARGET = 1.5
const WEB_STRIP_SIZES = ['64 KiB', '1 MiB']
const EDGE_RUNTIME = 'workerd'

function webTarget(runtime: string, shape: Shape, sizeLabel: string): number | undefined {
  const large = WEB_STRIP_SIZES.includes(sizeLabel)
  if (runtime.startsWith(EDGE_RUNTIME)) return large ? WEB_STRIP_TARGET : undefined
  if (!WEB_TARGET_RUNTIMES.some((r) => runtime.startsWith(r))) return undefined
  if (shape === 'compact') return WEB_TARGET
  return large ? WEB_STRIP_TARGET : undefined
}

const STRIPPERS: Record<string, string> = {
  'wasm-import': 'kernel, imported .wasm',
  'wasm-bytes': 'kernel, from bytes',
  js: 'JavaScript',
}
/**
 * `webhook()` over the usual JSON parser: reported, no longer judged. One bare HMAC alone costs
 * 1.07–1.51× the parser's CPU per request on this machine (the floor server's column), so no server
 * that verifies can meet the 1.05× this once asked for; the floor and the reference judge instead
 * (bench/notes.md, 28 Nov, "Target 4 against the parser, retired").
 */
/**
 * Target 4, floor: `webhook()` over the least any verifying server costs, the framework's JSON
 * parser plus one bare HMAC of the raw bytes (the `hmac` server), at every load shape.
 */
const HTTP_FLOOR_TARGET = 1.05
/**
 * Target 4, reference: `webhook()` over the verifier outside reviewers measure it against (the raw
 * body read from the stream, one HMAC, `timingSafeEqual`, `JSON.parse`: the `reference` server).
 * Judged for Koa; the other frameworks are reported against it without a target of their own.
 */
const HTTP_REFERENCE_TARGETS: Record<string, number> = { koa3: 1.03 }
/** A reference ratio's verdict, or what stands for it where there is no figure or no target. */
function referenceVerdict(framework: string, ratio: number | undefined): string {
  const target = HTTP_REFERENCE_TARGETS[framework]
  if (ratio === undefined) return '–'
  return target === undefined ? 'no target' : verdict(ratio, target)
}
const HTTP_LABELS: Record<string, string> = {
  express4: 'Express 4',
  express5: 'Express 5',
  koa3: 'Koa 3',
  hono: 'Hono (@hono/node-server)',
}
/** Target 5: at most one extra copy; the slack covers promises and small buffers, not a second copy. */
const MEMORY_TARGET = 1.05
/** The contract's Cost paragraph: an unauthenticated request costs at most this many HMACs over its body, on every entry point. */
const REFUSAL_TARGET = 8
/** What a unit figure's body was made of: a unit repeated, or a mix drawn at random. */
const madeOf = (worst: string) => (worst.startsWith('a mix of ') ? worst : `\`${worst}\` repeated`)
/** A unit figure's bound: its entry point's own (stored with the figure), else the contract's. */
const unitTarget = (f: UnitFigure) => f.hmacsPerSecret ?? REFUSAL_TARGET

const x = (ratio: number) => `${ratio.toFixed(2)}×`
const us = (ns: number) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(1)} µs`)
const mark = (ok: boolean) => (ok ? '✓' : '✗')
/** "✗ 1.42× (target ≤ 1.05×, 35 % over)". */
const verdict = (value: number, target: number) =>
  value <= target ? `✓ ≤ ${x(target)}` : `✗ ≤ ${x(target)}, ${(((value - target) / target) * 100).toFixed(0)} % over`

function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n')
}

const find = (p: PayloadResult, name: string) => p.candidates.find((c) => c.name === name) as CandidateResult

export interface Miss {
  target: string
  what: string
}

function microTables(results: PayloadResult[], misses: Miss[]): string {
  const rows = results.map((p) => {
    const ours = find(p, 'hookguard')
    const target = NODE_TARGETS[p.id]
    if (target !== undefined && ours.ratio > target) {
      misses.push({ target: '1', what: `${SHAPE_LABELS[p.shape]} at ${p.sizeLabel}: ${x(ours.ratio)} of the floor, target ≤ ${x(target)}` })
    }
    return [
      SHAPE_LABELS[p.shape],
      p.sizeLabel,
      us(find(p, 'floor').ns),
      `**${x(ours.ratio)}** (${ours.q1.toFixed(2)}–${ours.q3.toFixed(2)})`,
      ...PEERS.map((peer) => x(find(p, peer).ratio)),
      target === undefined ? 'no target' : verdict(ours.ratio, target),
    ]
  })
  const peerRows = results.map((p) => {
    const ours = find(p, 'hookguard')
    const fastest = PEERS.map((peer) => find(p, peer)).sort((a, b) => a.ratio - b.ratio)[0] as CandidateResult
    const ok = ours.ratio < fastest.ratio
    if (!ok)
      misses.push({
        target: '3',
        what: `${SHAPE_LABELS[p.shape]} at ${p.sizeLabel}: ${PEER_LABELS[fastest.name]} is faster (${x(fastest.ratio)} against ${x(ours.ratio)})`,
      })
    return [
      SHAPE_LABELS[p.shape],
      p.sizeLabel,
      x(ours.ratio),
      `${PEER_LABELS[fastest.name]} ${x(fastest.ratio)}`,
      `${mark(ok)} ${ok ? `${(fastest.ratio / ours.ratio).toFixed(2)}× faster` : `${(ours.ratio / fastest.ratio).toFixed(2)}× slower`}`,
    ]
  })
  return [
    '### Targets 1 and 3: `verifySignature` (Node build) against the floor and the peers',
    '',
    'Median ratio to the floor (`createHmac` over the same raw bytes) measured in the same round; for hookguard the interquartile range of the per-round ratios in brackets.',
    '',
    table(['body', 'size', 'floor', 'hookguard', ...PEERS.map((p) => PEER_LABELS[p] as string), 'target 1'], rows),
    '',
    table(['body', 'size', 'hookguard', 'fastest peer', 'target 3'], peerRows),
  ].join('\n')
}

function webTable(runs: NonNullable<Figures['web']>, misses: Miss[]): string {
  const rows: string[][] = []
  const withBaseline = runs.some((run) => run.results.some((p) => p.candidates.some((c) => c.name === 'hookguard-baseline')))
  for (const run of runs) {
    const build = run.runtime.startsWith(EDGE_RUNTIME) ? 'edge' : 'Web'
    const stripper = run.stripper === undefined ? build : `${build}; ${STRIPPERS[run.stripper] ?? run.stripper}`
    for (const p of run.results) {
      const ours = find(p, 'hookguard-web')
      const target = webTarget(run.runtime, p.shape, p.sizeLabel)
      if (target !== undefined && ours.ratio > target) {
        misses.push({
          target: '2',
          what: `${run.runtime}, ${SHAPE_LABELS[p.shape]} at ${p.sizeLabel}: ${x(ours.ratio)} of crypto.subtle.sign, target ≤ ${x(target)}`,
        })
      }
      const before = p.candidates.find((c) => c.name === 'hookguard-baseline')
      rows.push([
        run.runtime,
        stripper,
        SHAPE_LABELS[p.shape],
        p.sizeLabel,
        us(find(p, 'floor').ns),
        `**${x(ours.ratio)}** (${ours.q1.toFixed(2)}–${ours.q3.toFixed(2)})`,
        ...(withBaseline ? [before === undefined ? '' : `${x(before.ratio)} (${before.q1.toFixed(2)}–${before.q3.toFixed(2)})`] : []),
        target === undefined ? 'no target' : verdict(ours.ratio, target),
      ])
    }
  }
  return [
    '### Target 2: the Web build against the runtime’s own `crypto.subtle.sign` (cached key)',
    '',
    `Inside workerd (miniflare, a bundled Worker without \`nodejs_compat\`) the build is the edge one, whose kernel comes from the \`.wasm\` module the bundle links in; the build and the stripper that ran are in the second column. Judged: every body shape at 64 KiB and 1 MiB within ${x(WEB_STRIP_TARGET)} inside workerd; on Node 24, Bun and Deno compact bodies within ${x(WEB_TARGET)} and the shapes with whitespace at 64 KiB and 1 MiB within ${x(WEB_STRIP_TARGET)}. 1 KiB elsewhere and Node 20 are for reference.${withBaseline ? ' The column before is another build of the core (`--baseline`), measured in the same rounds: its ratio to the same floor.' : ''}`,
    '',
    table(
      [
        'runtime',
        'build; stripper',
        'body',
        'size',
        'subtle.sign',
        'hookguard',
        ...(withBaseline ? ['before (baseline build)'] : []),
        'target 2',
      ],
      rows,
    ),
  ].join('\n')
}

function httpTable(http: NonNullable<Figures['http']>, misses: Miss[]): string {
  const rows = http.results.map((r: HttpResult) => {
    const label = `${HTTP_LABELS[r.framework]}, ${r.connections} connections`
    if (r.floorRatio > HTTP_FLOOR_TARGET) {
      misses.push({
        target: '4, floor',
        what: `${label}: ${x(r.floorRatio)} the CPU per request of its JSON parser plus a bare HMAC, target ≤ ${x(HTTP_FLOOR_TARGET)}`,
      })
    }
    const referenceTarget = HTTP_REFERENCE_TARGETS[r.framework]
    if (referenceTarget !== undefined && r.referenceRatio !== undefined && r.referenceRatio > referenceTarget) {
      misses.push({
        target: '4, reference',
        what: `${label}: ${x(r.referenceRatio)} the CPU per request of the reference verifier, target ≤ ${x(referenceTarget)}`,
      })
    }
    return [
      HTTP_LABELS[r.framework] as string,
      String(r.connections),
      `${r.baseline.cpuUs.toFixed(1)} µs`,
      `${r.hmac.cpuUs.toFixed(1)} µs (${x(r.hmacRatio)})`,
      // Runs recorded before the reference server existed have no such figures.
      r.reference === undefined ? '–' : `${r.reference.cpuUs.toFixed(1)} µs`,
      `${r.webhook.cpuUs.toFixed(1)} µs`,
      `${r.cpuRatio.toFixed(3)}× (${r.cpuRatios.map((v) => v.toFixed(2)).join(', ')})`,
      `**${r.floorRatio.toFixed(3)}×** (${r.floorRatios.map((v) => v.toFixed(2)).join(', ')})`,
      r.referenceRatio === undefined || r.referenceRatios === undefined
        ? '–'
        : `**${r.referenceRatio.toFixed(3)}×** (${r.referenceRatios.map((v) => v.toFixed(2)).join(', ')})`,
      // Runs recorded before the control server existed have no such figure.
      r.controlRatios === undefined ? '–' : `${r.controlRatio.toFixed(3)}× (${r.controlRatios.map((v) => v.toFixed(2)).join(', ')})`,
      `${r.baseline.reqPerSec.toFixed(0)} / ${r.webhook.reqPerSec.toFixed(0)}`,
      `${r.baseline.p99Ms} / ${r.webhook.p99Ms} ms`,
      verdict(r.floorRatio, HTTP_FLOOR_TARGET),
      referenceVerdict(r.framework, r.referenceRatio),
    ]
  })
  return [
    `### Target 4: HTTP, 1 KiB signed delivery over loopback (${http.runtime})`,
    '',
    `Server CPU per request (user + system, from the server process), median over ${http.rounds} rounds of ${http.durationS} s of load per server at each load shape (concurrent connections). Every round starts its servers afresh (one process differs from another of the same code by up to a tenth) and warms them; at each load shape the servers then take turns in slices of ${http.sliceS ?? http.durationS} s, rotated every turn, so that each sees the same stretch of the host; ${pinnedText(http.results)} Each ratio is the median of the per-round ratios (each round's in brackets). Every server runs the same handler behind one middleware. Baseline: the framework's usual JSON parser, no verification. Parser + bare HMAC: that parser plus one \`createHmac\` over the raw bytes and nothing else, in the same middleware, the least any verifying server can cost (its ratio to the baseline shows how much of target 4 one HMAC uses up on this machine). Control: a second copy of that floor server, whose ratio to the first would be 1 on a quiet machine; how far it strays is how small a difference the run can tell. Reference: the verifier outside reviewers compare \`webhook()\` with, in one middleware and no parser before it: the raw body collected from the request stream, one \`createHmac\` over it, its hex compared with a header's by \`crypto.timingSafeEqual\`, \`JSON.parse\` (it checks no size, and its signature, over the bytes as sent, comes in a header of its own, since the service signs the body without the spaces in its values). Target 4, floor, judges \`webhook()\` against the parser plus the bare HMAC; target 4, reference, against the reference, within ${x(HTTP_REFERENCE_TARGETS.koa3 as number)} for Koa (the other frameworks are reported against it). \`webhook()\` against the parser alone is reported, not judged: the bare HMAC alone costs more than its old 1.05× here.`,
    '',
    table(
      [
        'framework',
        'connections',
        'CPU/req, JSON parser',
        'CPU/req, parser + bare HMAC',
        'CPU/req, reference',
        'CPU/req, webhook()',
        'webhook() ÷ parser',
        'webhook() ÷ parser + bare HMAC',
        'webhook() ÷ reference',
        'control ÷ parser + bare HMAC',
        'req/s parser / webhook()',
        'p99 parser / webhook()',
        'target 4, floor',
        'target 4, reference',
      ],
      rows,
    ),
  ].join('\n')
}

function instructionsTable(counted: NonNullable<Figures['instructions']>, misses: Miss[]): string {
  const thousands = (n: number) => `${(n / 1000).toFixed(1)} k`
  const rows = counted.results.map((r: InstructionsResult) => {
    const label = HTTP_LABELS[r.framework] as string
    if (r.floorRatio > HTTP_FLOOR_TARGET) {
      misses.push({
        target: '4, floor, counted',
        what: `${label}: ${x(r.floorRatio)} the simulated cycles per request of its JSON parser plus a bare HMAC, target ≤ ${x(HTTP_FLOOR_TARGET)}`,
      })
    }
    const referenceTarget = HTTP_REFERENCE_TARGETS[r.framework]
    if (referenceTarget !== undefined && r.referenceRatio !== undefined && r.referenceRatio > referenceTarget) {
      misses.push({
        target: '4, reference, counted',
        what: `${label}: ${x(r.referenceRatio)} the simulated cycles per request of the reference verifier, target ≤ ${x(referenceTarget)}`,
      })
    }
    return [
      label,
      `${thousands(r.hmac.instructions)} / ${thousands(r.hmac.cycles)}`,
      r.reference === undefined ? '–' : `${thousands(r.reference.instructions)} / ${thousands(r.reference.cycles)}`,
      `${thousands(r.webhook.instructions)} / ${thousands(r.webhook.cycles)}`,
      `${r.floorInstructionRatio.toFixed(3)}×`,
      `**${r.floorRatio.toFixed(3)}×**`,
      r.referenceInstructionRatio === undefined ? '–' : `${r.referenceInstructionRatio.toFixed(3)}×`,
      r.referenceRatio === undefined ? '–' : `**${r.referenceRatio.toFixed(3)}×**`,
      `${r.controlRatio.toFixed(3)}×`,
      verdict(r.floorRatio, HTTP_FLOOR_TARGET),
      referenceVerdict(r.framework, r.referenceRatio),
    ]
  })
  return [
    `### Target 4, floor, counted: the same servers under callgrind (${counted.runtime})`,
    '',
    `The floor server (parser + bare HMAC), the reference verifier and \`webhook()\` of the table above, two processes of each, run under Valgrind's callgrind (bench/instructions.ts), which counts the instructions a server process executes and simulates its caches (32 KiB first level, 32 MiB last level, as on the AMD EPYC these figures were first taken on) and branch predictor, so the figures do not move with the host's load. The six servers of a framework start together, are warmed with ${counted.warmup} requests each, then counted over ${counted.requests} requests at ${counted.connections} connections. One process counts up to 3 % more or less than another of the same code, so the ratio is between the means of the two copies, and the floor's two copies against each other show how far a single process strays. A simulated cycle is KCachegrind's estimate: one per instruction, ten per first-level cache miss and per mispredicted branch, a hundred per last-level miss. User space only: the kernel's share of each request, the same for every server (a quarter of Hono's CPU time here), is left out, so these ratios are stricter than the CPU ratios above.`,
    '',
    table(
      [
        'framework',
        'instructions / simulated cycles per request, parser + bare HMAC',
        'the same, reference',
        'the same, webhook()',
        'webhook() ÷ floor, instructions',
        'webhook() ÷ floor, simulated cycles',
        'webhook() ÷ reference, instructions',
        'webhook() ÷ reference, simulated cycles',
        'floor, second copy ÷ first, simulated cycles',
        'target 4, floor',
        'target 4, reference',
      ],
      rows,
    ),
  ].join('\n')
}

function pinnedText(results: readonly HttpResult[]): string {
  return results.every((r) => r.pinned)
    ? 'the load generator runs on one core and the servers on the other (`taskset`), so they never share one.'
    : 'the load generator and the servers shared the cores (no `taskset`, or one core).'
}

function memoryTable(memory: NonNullable<Figures['memory']>, misses: Miss[]): string {
  const rows = memory.results.map((r) => {
    if (r.copies > MEMORY_TARGET) misses.push({ target: '5', what: `${SHAPE_LABELS[r.shape]}: ${r.copies.toFixed(2)} copies of the body` })
    return [
      SHAPE_LABELS[r.shape],
      `${(r.arrayBuffers / 1024).toFixed(0)} KiB`,
      `${(r.heap / 1024).toFixed(0)} KiB`,
      `${((r.wasmCopiedIn ?? 0) / 1024).toFixed(0)} KiB`,
      `**${r.copies.toFixed(2)}** (largest trial ${r.maxCopies.toFixed(2)})`,
      r.copies <= MEMORY_TARGET ? '✓ ≤ 1 copy' : `✗ ≤ 1 copy, ${(r.copies - 1).toFixed(2)} over`,
    ]
  })
  return [
    `### Target 5: memory while verifying a 1 MiB body (${memory.runtime}, Node build)`,
    '',
    'Growth of `arrayBuffers` and `heapUsed` across one call with no collection inside it, plus the bytes copied into WebAssembly memory (the Node build scans a compact body there, 16 KiB at a time, and strips whitespace there, in place; traced per call, since neither figure shows it), median of the kept trials (the largest in brackets): everything the call allocated, so an upper bound on what it held at once.',
    '',
    table(['body', 'buffers', 'heap', 'into WebAssembly memory', 'copies of the body', 'target 5'], rows),
    '',
    memory.wasmRetained === undefined
      ? ''
      : `The stripper's WebAssembly memory is kept between calls (WebAssembly memory cannot shrink): ${(memory.wasmRetained / 1024).toFixed(0)} KiB after these trials, the 1 MiB bodies plus its 4 KiB of tables, in 64 KiB pages; bodies over 1 MiB use the portable stripper, so it never grows beyond that.`,
    memory.allocation === undefined
      ? ''
      : `\nPer verified 1 KiB delivery (V8's sampling heap profiler, counting what the collector freed): \`createReceiver().verify()\` allocates ${memory.allocation.receiver.toFixed(0)} bytes, the HTTP bench's floor (decode, one \`createHmac\`, \`JSON.parse\`) ${memory.allocation.floor.toFixed(0)}. Not a target: inside a loaded server each byte is paid again by the young-generation collector, and unlike a time the count does not move with the host's load.`,
  ].join('\n')
}

/** `hookguard inspect --forward-to`: the p50 it adds to a 1 KiB delivery on loopback must stay within 1 ms. */
const INSPECT_TARGET_MS = 1

function inspectTable(inspect: NonNullable<Figures['inspect']>, misses: Miss[]): string {
  const met = inspect.overheadP50 <= INSPECT_TARGET_MS
  if (!met) misses.push({ target: 'inspect', what: `the inspector adds ${inspect.overheadP50.toFixed(3)} ms (p50) to a 1 KiB delivery` })
  const ms = (value: number) => `${value.toFixed(3)} ms`
  return [
    `### The inspector in front of an app (${inspect.runtime})`,
    '',
    `\`hookguard inspect --forward-to\` (bench/inspect.ts): ${inspect.requests} signed ${inspect.bodyBytes}-byte deliveries each way, one at a time over a kept-alive connection, straight to the app, through the inspector, and through a bare Node proxy that only pipes (what any proxy hop costs), each in its own process on loopback, in rotating blocks of 50. The inspector records each delivery and computes hookguard's verdict and diagnosis beside the forwarding.`,
    '',
    table(
      ['', 'p50', 'p99'],
      [
        ['straight to the app', ms(inspect.direct.p50), ms(inspect.direct.p99)],
        ['through the inspector', ms(inspect.proxied.p50), ms(inspect.proxied.p99)],
        ['through a bare Node proxy (the hop alone)', ms(inspect.bare.p50), ms(inspect.bare.p99)],
        ['added by the inspector', `**${ms(inspect.overheadP50)}**`, ''],
        ['added by the bare proxy', ms(inspect.bareOverheadP50), ''],
      ],
    ),
    '',
    met ? `✓ target: at most ${INSPECT_TARGET_MS} ms added at p50.` : `✗ target: at most ${INSPECT_TARGET_MS} ms added at p50.`,
  ].join('\n')
}

/** The hand-off's answer: p50 within 1 ms of a route that does nothing, p99 within 10 % of its p99. */
const HANDOFF_P50_MS = 1
const HANDOFF_P99_RATIO = 1.1

/** An answer's latency, and one latency over another, as the hand-off's figures print them. */
const latency = (value: number) => `${value.toFixed(2)} ms`
const latencyAdded = (value: number) => `${value >= 0 ? '+' : ''}${latency(value)}`

function handoffTable(handoff: NonNullable<Figures['handoff']>, misses: Miss[]): string {
  const { empty, inline, handoff: queued, verified, control } = handoff.answers
  const p50Added = queued.p50 - empty.p50
  const p99Ratio = queued.p99 / empty.p99
  const p50Met = p50Added <= HANDOFF_P50_MS
  const p99Met = p99Ratio <= HANDOFF_P99_RATIO
  if (!p50Met) misses.push({ target: 'handoff', what: `the hand-off's p50 is ${p50Added.toFixed(2)} ms over the empty route's` })
  if (!p99Met) misses.push({ target: 'handoff', what: `the hand-off's p99 is ${p99Ratio.toFixed(2)}× the empty route's` })
  // Runs recorded before the figure existed have none.
  const cpu = (variant: keyof typeof handoff.answers) => {
    const us = handoff.cpuPerDeliveryUs?.[variant]
    return us === undefined ? '–' : `${us.toFixed(0)} µs`
  }
  const answered = (r: typeof empty) =>
    `${Object.entries(r.statuses)
      .map(([status, count]) => `${count} × ${status}`)
      .join(', ')}${r.errors > 0 ? `, ${r.errors} errors` : ''}`
  return [
    `### Answer fast, process later (${handoff.runtime})`,
    '',
    `bench/handoff.ts: ${handoff.rate} signed ${handoff.bodyBytes}-byte deliveries a second for ${handoff.durationS} s to each of ${control !== undefined ? 'five' : verified === undefined ? 'three' : 'four'} Express 5 servers, each in its own process on loopback, sent open-loop (on schedule, latency counted from when each was due, bench/open-loop.ts)${handoff.rounds === undefined ? '' : `, the servers taking turns in ${handoff.rounds} rounds whose answers are pooled`}. \`inline\`: \`webhook()\` and a handler that works ${handoff.workMs} ms before it answers; \`handoff\`: \`webhook({ handoff })\` onto a BullMQ queue on a real redis-server, a worker process doing the ${handoff.workMs} ms; \`empty\`: a route that answers 202 and does nothing${verified === undefined ? '' : '; `verified`: `webhook()` answering 202 at once, what verifying costs, which no hand-off undercuts'}${control === undefined ? '' : "; `empty route again`: the empty route in a process of its own, the run's noise"}. The worker runs on the same cores as background work, ${handoff.workerPolicy === 'idle' ? "under Linux's idle scheduling policy (`SCHED_IDLE`: it gets a core only when no other process wants one)" : 'at the lowest priority (`nice` 19)'}.`,
    '',
    table(
      ['server', 'p50', 'p99', 'max', 'answered', 'server CPU a delivery'],
      [
        ['empty route', latency(empty.p50), latency(empty.p99), latency(empty.max), answered(empty), cpu('empty')],
        ...(verified === undefined
          ? []
          : [['verified only', latency(verified.p50), latency(verified.p99), latency(verified.max), answered(verified), cpu('verified')]]),
        ['hand-off', `**${latency(queued.p50)}**`, `**${latency(queued.p99)}**`, latency(queued.max), answered(queued), cpu('handoff')],
        ['inline', latency(inline.p50), latency(inline.p99), latency(inline.max), answered(inline), cpu('inline')],
        ...(control === undefined
          ? []
          : [['empty route again', latency(control.p50), latency(control.p99), latency(control.max), answered(control), cpu('control')]]),
      ],
    ),
    '',
    `${p50Met ? '✓' : '✗'} target: the hand-off's p50 within ${HANDOFF_P50_MS} ms of the empty route's (${latencyAdded(p50Added)}). ${p99Met ? '✓' : '✗'} target: its p99 within ${Math.round((HANDOFF_P99_RATIO - 1) * 100)} % of the empty route's (${p99Ratio.toFixed(2)}×).${verified === undefined ? '' : ` The queue's own share, against the verified route: p50 ${latencyAdded(queued.p50 - verified.p50)}, p99 ${(queued.p99 / verified.p99).toFixed(2)}×; verifying's, the verified route against the empty one: p50 ${latencyAdded(verified.p50 - empty.p50)}, p99 ${(verified.p99 / empty.p99).toFixed(2)}×.`}`,
    ...controlLines(empty, control),
    ...workerElsewhereLines(handoff),
    ...machineLines(handoff),
    '',
    `The workers: from the receiver's verdict to the handler's start, p50 ${latency(handoff.endToEnd.p50)}, p99 ${latency(handoff.endToEnd.p99)} (${handoff.endToEnd.deliveries} deliveries at ${handoff.rate} a second, one worker process with ${handoff.workMs} ms handlers). One worker process with a handler that does nothing, concurrency ${handoff.worker.concurrency}, drains a backlog of ${handoff.worker.deliveries} at **${handoff.worker.perSecond.toFixed(0)} deliveries a second**.`,
  ].join('\n')
}

/**
 * The empty route against its copy in the same run: two servers that run the same code, so what
 * sets them apart is the machine. A target finer than that spread is not one this run can judge.
 */
function controlLines(empty: OpenLoopResult, control: OpenLoopResult | undefined): string[] {
  if (control === undefined) return []
  return [
    '',
    `The same empty route in a second process, in the same turns: p50 ${latencyAdded(control.p50 - empty.p50)} and p99 ${(control.p99 / empty.p99).toFixed(2)}× the first's. Two identical servers read that far apart here; a difference between two rows smaller than that is the machine's, not the code's.`,
  ]
}

/**
 * The same turns with no worker running, after the ones above: the answer as a deployment whose
 * workers run elsewhere sees it. Told beside the targets, which stay judged on the run with the
 * worker, as the issue that set them measures.
 */
function workerElsewhereLines(handoff: NonNullable<Figures['handoff']>): string[] {
  const elsewhere = handoff.workerElsewhere
  if (elsewhere === undefined) return []
  const { empty, verified, handoff: queued, control } = elsewhere
  return [
    '',
    `With no worker on these cores (the same turns for the empty route, the verified one and the hand-off, its jobs left waiting, as for workers on other machines): empty route p50 ${latency(empty.p50)}, p99 ${latency(empty.p99)}; verified only p50 ${latency(verified.p50)}, p99 ${latency(verified.p99)}; hand-off p50 ${latency(queued.p50)}, p99 ${latency(queued.p99)}, that is p50 ${latencyAdded(queued.p50 - empty.p50)} and p99 ${(queued.p99 / empty.p99).toFixed(2)}× the empty route's${control === undefined ? '' : `; the empty route's copy p50 ${latencyAdded(control.p50 - empty.p50)}, p99 ${(control.p99 / empty.p99).toFixed(2)}×`}.`,
  ]
}

/**
 * Every process's CPU a delivery, and the share of the machine's cores that keeps busy at the run's
 * rate: the load the answers above wait in. Runs recorded before it was measured have none.
 */
function machineLines(handoff: NonNullable<Figures['handoff']>): string[] {
  const { machine, rate } = handoff
  if (machine === undefined) return []
  const busy = (cpu: ProcessCpu) => {
    const total = cpu.server + cpu.redis + cpu.worker + cpu.sender
    const share = (total * rate) / 1e6 / machine.cores
    return `${total.toFixed(0)} µs, ${(share * 100).toFixed(0)} % of the ${machine.cores} cores`
  }
  const parts = (cpu: ProcessCpu) =>
    `server ${cpu.server.toFixed(0)}, Redis ${cpu.redis.toFixed(0)}, worker ${cpu.worker.toFixed(0)}, sender ${cpu.sender.toFixed(0)}`
  const row = (label: string, cpu: ProcessCpu | undefined) => (cpu === undefined ? [] : [`${label} ${busy(cpu)} (${parts(cpu)})`])
  const withWorker = [
    ...row('empty route', machine.withWorker.empty),
    ...row('verified only', machine.withWorker.verified),
    ...row('hand-off', machine.withWorker.handoff),
  ]
  const elsewhere = [...row('verified only', machine.workerElsewhere.verified), ...row('hand-off', machine.workerElsewhere.handoff)]
  return [
    '',
    `The machine's CPU a delivery, every process on it counted over the same windows (µs of CPU; at ${rate} a second, the share of the cores it keeps busy), with the worker running: ${withWorker.join('; ')}. With no worker: ${elsewhere.join('; ')}. The answers wait in that load: the busier the cores, the longer a request waits for one, and the tail grows faster than the share.`,
  ]
}

/** Log-scale grouped bars: the ratio to the floor of hookguard and each peer, per body and size. */
export function renderSvg(results: PayloadResult[]): string {
  const names = ['hookguard', ...PEERS]
  const colours = ['#1f6feb', '#8b949e', '#d29922', '#a371f7', '#3fb950']
  const barW = 12
  const groupW = names.length * barW + 22
  const left = 56
  const top = 40
  const plotH = 300
  const width = left + results.length * groupW + 20
  const height = top + plotH + 90
  const maxRatio = Math.max(2, ...results.flatMap((p) => p.candidates.map((c) => c.ratio)))
  const lo = Math.log10(0.5)
  const hi = Math.log10(maxRatio * 1.2)
  const y = (ratio: number) => top + plotH - ((Math.log10(Math.max(ratio, 0.5)) - lo) / (hi - lo)) * plotH
  const parts: string[] = []
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="11" role="img" aria-labelledby="chart-title">`,
    '<title id="chart-title">Time to verify a webhook as a multiple of one HMAC-SHA256 over the same bytes: hookguard and four peer libraries, per body shape and size</title>',
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="${left}" y="18" font-size="13" font-weight="bold">Time to verify, as a multiple of one HMAC-SHA256 over the same bytes (Node, log scale; lower is better)</text>`,
  )
  for (const tick of [0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500].filter((t) => Math.log10(t) <= hi)) {
    parts.push(
      `<line x1="${left}" x2="${width - 10}" y1="${y(tick).toFixed(1)}" y2="${y(tick).toFixed(1)}" stroke="${tick === 1 ? '#000' : '#ddd'}"/>`,
      `<text x="${left - 6}" y="${(y(tick) + 4).toFixed(1)}" text-anchor="end">${tick}×</text>`,
    )
  }
  results.forEach((p, g) => {
    const x0 = left + g * groupW + 11
    names.forEach((name, i) => {
      const c = p.candidates.find((candidate) => candidate.name === name)
      if (!c) return
      const yTop = y(c.ratio)
      parts.push(
        `<rect x="${x0 + i * barW}" y="${yTop.toFixed(1)}" width="${barW - 2}" height="${(top + plotH - yTop).toFixed(1)}" fill="${colours[i]}"><title>${PEER_LABELS[name]}, ${p.id}: ${c.ratio.toFixed(2)}×</title></rect>`,
      )
    })
    const target = NODE_TARGETS[p.id]
    if (target !== undefined) {
      parts.push(
        `<line x1="${x0 - 4}" x2="${x0 + names.length * barW + 2}" y1="${y(target).toFixed(1)}" y2="${y(target).toFixed(1)}" stroke="#cf222e" stroke-width="2" stroke-dasharray="4 2"/>`,
      )
    }
    const shape = p.shape as Shape
    parts.push(
      `<text x="${x0 + (names.length * barW) / 2}" y="${top + plotH + 14}" text-anchor="middle">${p.sizeLabel}</text>`,
      `<text x="${x0 + (names.length * barW) / 2}" y="${top + plotH + 27}" text-anchor="middle" fill="#555">${shape}</text>`,
    )
  })
  const legendY = top + plotH + 50
  names.forEach((name, i) => {
    const lx = left + i * 150
    parts.push(
      `<rect x="${lx}" y="${legendY}" width="10" height="10" fill="${colours[i]}"/>`,
      `<text x="${lx + 14}" y="${legendY + 9}">${PEER_LABELS[name]}</text>`,
    )
  })
  parts.push(
    `<line x1="${left}" x2="${left + 20}" y1="${legendY + 25}" y2="${legendY + 25}" stroke="#cf222e" stroke-width="2" stroke-dasharray="4 2"/>`,
    `<text x="${left + 26}" y="${legendY + 29}">hookguard’s target 1 (see Results)</text>`,
    '</svg>',
  )
  return `${parts.join('\n')}\n`
}

function entryPointTable(results: EntryResult[], runtime: string, misses: Miss[]): string {
  // The columns as the run named them (report.ts does not load the benchmark itself).
  const entries = (results[0]?.figures ?? []).map(({ entry, label }) => ({ id: entry, label }))
  const rows = results.map((r) => [
    r.label,
    us(r.floorNs),
    ...entries.map((entry) => {
      const f = r.figures.find((figure) => figure.entry === entry.id)
      if (f === undefined) return '–'
      // Mode 'none' hands a JSON body on: that is a delivery, and its parse the application's cost.
      if (f.status < 400) return `_${x(f.ratio)}, ${f.status}_`
      // The contract's bound is per configured secret: three secrets are three HMACs of each form.
      const secrets = f.secrets ?? 1
      const judged = f.ratio / secrets
      if (judged > REFUSAL_TARGET) {
        misses.push({
          target: 'refusal',
          what: `${entry.label}, ${r.label}: ${x(judged)} one HMAC over the body a secret, target ≤ ${x(REFUSAL_TARGET)}`,
        })
      }
      const shown = secrets === 1 ? x(f.ratio) : `${x(f.ratio)} (${x(judged)} a secret)`
      return `${judged > REFUSAL_TARGET ? '✗ ' : ''}${shown}`
    }),
  ])
  const refusals = results.flatMap((r) => r.figures.filter((f) => f.status >= 400))
  const worst = Math.max(...refusals.map((f) => f.ratio / (f.secrets ?? 1)))
  const rounds = results[0]?.rounds ?? 0
  return [
    `### Unauthenticated requests on every entry point (${runtime}, Node build)`,
    '',
    `\`createReceiver(options).verify(request)\` for each mode's message address and \`.token(request)\` for the token address, in process, each sent every hostile shape at ${((results[0]?.size ?? 0) / 2 ** 20).toFixed(0)} MiB (and those built against the signature's fallback forms again at 64 KiB, the largest body those forms are tried on) and refusing it: a signature that matches nothing (\`secret\`), a wrong password (\`basic\`), a token of the right app signed with another secret (\`oauth2\`; as a form, the token is the body's last field), a body that is not JSON or nests too deep (\`none\`), no valid credentials (the token address, the shape as the GET's query or the POST's form). Median over ${rounds} rounds of the refusal's time over one bare HMAC of the same bytes in the same round, by process CPU time. Target: every refusal ≤ ${x(REFUSAL_TARGET)} a configured secret (the contract's Cost paragraph); ✗ marks a miss. In italics, with its status: a body mode \`none\` hands on (it is JSON), a delivery rather than a refusal, not judged. Worst refusal, a secret: ${x(worst)} (${verdict(worst, REFUSAL_TARGET)}).`,
    '',
    table(['body (1 MiB unless said)', 'one HMAC', ...entries.map((e) => e.label)], rows),
  ].join('\n')
}

function unitsTable(units: UnitsResult, runtime: string, misses: Miss[]): string {
  const sizes = units.sizes.map((size) => (size >= 2 ** 20 ? `${size / 2 ** 20} MiB` : `${size / 1024} KiB`))
  const entries = [...new Map(units.figures.map((f) => [f.entry, f.label])).entries()]
  const rows: string[][] = []
  for (const build of ['node', 'web'] as const) {
    for (const [entry, label] of entries) {
      rows.push([
        build === 'node' ? 'Node' : 'Web',
        label,
        ...units.sizes.map((size) => {
          const f = units.figures.find((figure) => figure.build === build && figure.entry === entry && figure.size === size)
          if (f === undefined) return '–'
          // The entry point's own bound where it states one (`unicodeWhitespace`: docs/security.md).
          const target = unitTarget(f)
          if (f.ratio > target) {
            misses.push({
              target: 'refusal',
              what: `${build} build, ${label}, ${madeOf(f.worst)}: ${x(f.ratio)} one HMAC a secret, target ≤ ${x(target)}`,
            })
          }
          return `${f.ratio > target ? '✗ ' : ''}${x(f.ratio)} (${x(f.q1)}–${x(f.q3)}), \`${f.worst.replace(/\|/g, '\\|')}\``
        }),
      ])
    }
  }
  // The figure nearest its own bound, or furthest over it.
  const worst = units.figures.reduce<UnitFigure | undefined>(
    (w, f) => (w === undefined || f.ratio / unitTarget(f) > w.ratio / unitTarget(w) ? f : w),
    undefined,
  )
  return [
    `### Unauthenticated requests, every repeated unit (${runtime}, Node and Web builds)`,
    '',
    `Bodies that repeat one unit of one to three bytes, over the bytes the core's scans compare against (testkit/src/units.ts, ${units.every ? `all ${units.units} units` : `a sample of ${units.units} units`}), and bodies drawn at random from groups of those bytes (\`MIXES\`, on which a pass that branches on each byte's kind mispredicts; runs from before they were added have none), at each size, through every entry point of testkit/src/entry-points.ts, on the Node build against one \`createHmac\` and on the Web build against one \`crypto.subtle.sign\` of the same bytes. Each (unit, entry point, size, build) is timed once; the unit that cost most is measured again, interleaved with the HMAC, and its median a configured secret is shown with its interquartile range and the unit. Target: ≤ ${x(REFUSAL_TARGET)} a secret, or the entry point's own bound where docs/security.md states one (${x(UNICODE_HMACS_PER_SECRET)} with \`unicodeWhitespace\`). Worst against its bound: ${worst === undefined ? '–' : `${worst.label}, ${x(worst.ratio)} (${verdict(worst.ratio, unitTarget(worst))})`}.`,
    '',
    table(['build', 'entry point', ...sizes], rows),
  ].join('\n')
}

function refusalTables(adversarial: NonNullable<Figures['adversarial']>, misses: Miss[]): string {
  const pick = (r: RefusalResult, secrets: number, unicodeWhitespace: boolean) =>
    r.figures.find((f) => f.build === 'after' && f.secrets === secrets && f.unicodeWhitespace === unicodeWhitespace) as RefusalFigure
  // Three secrets are three HMACs of every form tried, so the rule is read per secret.
  const cell = (f: RefusalFigure, bold: boolean) => {
    const ratio = bold ? `**${x(f.ratio)}**` : x(f.ratio)
    return f.secrets === 1 ? `${ratio} (${f.q1.toFixed(2)}–${f.q3.toFixed(2)})` : `${ratio} (${x(f.ratio / f.secrets)} a secret)`
  }
  const rows = adversarial.results.map((r) => [
    r.label,
    us(r.floorNs),
    cell(pick(r, 1, false), r.hostile),
    cell(pick(r, 3, false), r.hostile),
    cell(pick(r, 1, true), false),
    cell(pick(r, 3, true), false),
  ])
  const rounds = adversarial.results[0]?.rounds ?? 0
  const parts = [
    `### Unauthenticated requests: the cost of a refusal (${adversarial.runtime}, Node build)`,
    '',
    `\`verifySignature(body, bogusSignature, secrets)\` on ${(adversarial.size / 2 ** 20).toFixed(0)} MiB bodies built to make the fallback forms (Unicode whitespace removed, Gson's escapes applied) as expensive as they can be, and on two ordinary deliveries for reference. Every figure is the median over ${rounds} rounds of a refusal's time over one bare \`createHmac('sha256', key).update(body).digest()\` of the same bytes in the same round, both timed by the process's CPU time rather than the wall clock (the calls are synchronous, and on a shared machine a batch's wall time is mostly its wait for a core): for one secret with the interquartile range of the per-round ratios, for three secrets (every form tried is hashed once per secret) with the figure per secret. Bold: the default settings, on the hostile bodies.`,
    '',
    table(['body', 'one HMAC', '1 secret', '3 secrets', '1 secret, `unicodeWhitespace`', '3 secrets, `unicodeWhitespace`'], rows),
  ]
  const http: UnderAttackResult | undefined = adversarial.http
  if (http) {
    const ms = (value: number) => `${value.toFixed(1)} ms`
    parts.push(
      '',
      `Over HTTP: ${http.framework === 'express5' ? 'Express 5' : http.framework} with \`webhook()\` (one secret, default settings) in its own process on loopback; one client sends a valid 1 KiB delivery every ${http.validIntervalMs} ms (or when the previous one is answered, if later) while ${http.hostileClients} clients each send the hostile body again as soon as it is refused (401). ${http.rounds} rounds of ${http.phaseS} s per phase, phases rotated; latencies of all rounds together. Server CPU per refusal: the phase's CPU less the valid deliveries' at their quiet cost, over the refusals.`,
      '',
      table(
        ['hostile clients', 'valid deliveries: median', 'p99', 'refusals/s', 'server CPU per refusal'],
        [
          ['none', ms(http.quiet.medianMs), ms(http.quiet.p99Ms), '–', '–'],
          ...http.attacks.map((a) => [
            `${http.hostileClients} × ${a.label}`,
            ms(a.medianMs),
            ms(a.p99Ms),
            a.refusalsPerSec.toFixed(0),
            ms(a.cpuMsPerRefusal),
          ]),
        ],
      ),
    )
  }
  if (adversarial.entryPoints) parts.push('', entryPointTable(adversarial.entryPoints, adversarial.runtime, misses))
  if (adversarial.units) parts.push('', unitsTable(adversarial.units, adversarial.runtime, misses))
  return parts.join('\n')
}

export function renderMarkdown(figures: Figures, notes: string): { markdown: string; svg: string; tables: string } {
  const misses: Miss[] = []
  const sections: string[] = []
  if (figures.micro) sections.push(microTables(figures.micro.results, misses))
  if (figures.web) sections.push(webTable(figures.web, misses))
  if (figures.http) sections.push(httpTable(figures.http, misses))
  if (figures.instructions) sections.push(instructionsTable(figures.instructions, misses))
  if (figures.memory) sections.push(memoryTable(figures.memory, misses))
  if (figures.adversarial) sections.push(refusalTables(figures.adversarial, misses))
  if (figures.inspect) sections.push(inspectTable(figures.inspect, misses))
  if (figures.handoff) sections.push(handoffTable(figures.handoff, misses))
  const missList = misses.length === 0 ? 'Every target is met.' : misses.map((m) => `- ✗ target ${m.target}: ${m.what}`).join('\n')
  const tables = [...sections, '### Targets not met', missList].join('\n\n')

  const markdown = `# Benchmarks

Generated by \`pnpm bench\` (bench/run.ts) on ${figures.date.slice(0, 10)}; do not edit by hand (hand-written notes live in bench/notes.md).
Every figure is a ratio measured side by side in the same run, on Node 20 unless stated.

![Time to verify as a multiple of one HMAC over the same bytes](benchmarks.svg)

## Summary

${missList}

## Machine and versions

| | |
|---|---|
${Object.entries(figures.machine)
  .map(([k, v]) => `| ${k} | ${v} |`)
  .join('\n')}
| load average (1, 5, 15 min) at start / end | ${figures.load.before} / ${figures.load.after} |
${Object.entries(figures.versions)
  .map(([k, v]) => `| ${k} | ${v} |`)
  .join('\n')}

## Reproduce

\`\`\`sh
pnpm install && pnpm build
pnpm bench                  # everything, about 45 minutes; rewrites this page
pnpm bench --only micro     # or web, http, instructions, memory, adversarial, inspect, handoff: one part; the others keep their last figures
pnpm bench --only web --baseline=<folder>   # the Web build beside another one (a copy of its dist/web), in the same rounds
pnpm bench --only adversarial --units=64    # the repeated units sampled (minutes) rather than every one (about an hour)
pnpm bench --quick          # CI smoke: short runs, prints the tables, writes nothing
\`\`\`

## Method

- **Bodies**: realistic webhook JSON (customer records with CJK and accented names), exactly 1 KiB, 64 KiB and 1 MiB, generated from a fixed seed (testkit/src/payload.ts): *compact* has no whitespace byte at all, so the canonical form is the body itself; *pretty* is the same kind of data indented by two spaces; *compact, spaces in values* is Gson-style output whose string values hold spaces, as the service's real deliveries do.
- **Floor**: \`createHmac('sha256', key).update(bytes).digest('hex')\` over the raw bytes, key imported once (a \`KeyObject\`). On the Web build: \`await crypto.subtle.sign('HMAC', key, bytes)\` with a cached \`CryptoKey\`.
- **Peers**, each handed the same bytes as a \`Buffer\` and a valid signature made its own way (fresh timestamps every round): \`@octokit/webhooks-methods\` \`verify\` (takes only a string, so the call includes \`buffer.toString('utf8')\`), \`stripe\` \`webhooks.signature.verifyHeader\` (\`t=…,v1=…\`, tolerance 300 s), \`standardwebhooks\` \`verify\` (base64 \`whsec_\` key, \`webhook-id/-timestamp/-signature\`, \`jsonParse: false\`), \`svix\` \`verify\` (\`svix-*\` headers; it always parses the JSON, and has no option not to).
- **Timing** (bench/measure.ts): our own loop, not tinybench, because tinybench finishes one task before starting the next, so drift on a shared machine lands on one candidate. Here each round measures every candidate once, in an order rotated every round, each batch ${figures.quick ? 'a few' : '25'} ms of back-to-back calls after a forced collection, and every ratio divides by the floor of the same round; the figure is the median over ${figures.micro?.results[0]?.candidates[0]?.rounds ?? 15} rounds (${figures.web?.[0]?.results[0]?.candidates[0]?.rounds ?? 31} for the Web build, whose \`subtle.sign\` calls are scheduled on a worker thread and swing more), after a warm-up. Every call's result is checked, so nothing is optimised away and every signature really verified. \`performance.now()\` is the clock everywhere (batches last milliseconds, and the same file runs on Bun and Deno).
- **Builds**: the built packages are measured (\`dist\`, rebuilt by the script when older than \`src\`), the Node build through the package's \`node\` condition, the Web build by path on Node 24, Bun and Deno, and the edge build inside workerd: bench/web-workerd.ts bundles a Worker as wrangler does (the \`workerd\` condition, strip.wasm linked in as a compiled module) and runs it through miniflare, where the clock ticks in whole milliseconds, so its batches last 50 ms.
- **HTTP** (bench/http.ts, bench/http-server.ts): both servers of a framework run in child processes on loopback; autocannon runs in the parent. Each slice of load reads the server's \`process.cpuUsage()\` over IPC before and after; CPU per request is the difference over the requests completed. The servers take turns in slices, rotated every turn, after a warm-up of each; see the table's text. Every response is checked (a 500 means the handler did not get the payload).
- **HTTP, counted** (bench/instructions.ts): the floor and \`webhook()\` servers under Valgrind's callgrind, two processes of each; see the table's text.
- **Memory** (bench/memory.ts): see its table.
- **Unauthenticated requests** (bench/adversarial.ts): the micro benchmark's loop with bogus signatures, so that every call is a refusal (each checked), timed by CPU time; then the same loop over every entry point of \`createReceiver\` (each mode's message address, the token address) with every hostile shape of testkit/src/hostile.ts, each call's answer checked; then every body that repeats a unit of one to three of the bytes the core's scans compare against (testkit/src/units.ts) through every entry point of testkit/src/entry-points.ts on the Node and the Web build; see their sections.

## Results

${sections.join('\n\n')}

## Notes and what was tried

${notes.replace(/<!--[\s\S]*?-->\n?/g, '').trim()}
`
  return { markdown, svg: figures.micro ? renderSvg(figures.micro.results) : '', tables }
}
