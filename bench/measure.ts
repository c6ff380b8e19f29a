/**
 * The timing loop shared by the Node and the Web-build micro benchmarks.
 *
 * Our own loop rather than tinybench: tinybench runs one task to the end before the next, so drift
 * on this noisy two-core machine (another process, a frequency change) lands on one candidate only;
 * here every round measures every candidate once, in rotated order, and each ratio divides by the
 * floor of the same round. It also times a batch of calls with one clock read on each side instead
 * of one per call, which at 1 KiB (a few microseconds a call) would otherwise be part of the figure.
 *
 * Portable (no Node APIs, erasable TypeScript only): `performance.now()` exists on every runtime,
 * and batches last milliseconds, so its resolution is not a factor.
 */
import type { Payload } from '@hookguard/testkit/payload'

/** A call that returns something truthy when the signature verified; throwing also counts as failure. */
export type Call = () => unknown

export interface Prepared {
  call: Call
  /** Awaited in the loop: a Promise-returning API pays for its promise, as its users do. */
  async: boolean
}

/** What the loop needs of a body; the webhook payloads are one kind, adversarial.ts's hostile bodies another. */
export interface Sample {
  id: string
  size: number
  sizeLabel: string
  bytes: Uint8Array
}

export interface Candidate<S extends Sample = Payload> {
  name: string
  /** Builds the signature its own way and returns the call; runs outside the timed region, each round. */
  prepare(sample: S): Promise<Prepared>
}

export interface Options {
  rounds: number
  /** Target length of one timed batch. */
  batchMs: number
  /** Untimed running of every candidate before the first round. */
  warmupMs: number
  /** The candidate every ratio divides by. */
  floor: string
  /**
   * What a batch's time is read from, in ms; `performance.now()` unless given. A batch still ends
   * on wall time, so its length does not depend on the clock.
   */
  clock?: () => number
  log?: (line: string) => void
}

export interface CandidateResult {
  name: string
  /** Median nanoseconds per call over the rounds. */
  ns: number
  /** Median over rounds of (this candidate's time / the floor's time in the same round). */
  ratio: number
  /** Interquartile range of the per-round ratios: how much the rounds agreed. */
  q1: number
  q3: number
  rounds: number
}

export interface PayloadResult {
  id: string
  shape: Payload['shape']
  size: number
  sizeLabel: string
  candidates: CandidateResult[]
}

export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  if (sorted.length === 0) return Number.NaN
  const position = (sorted.length - 1) * q
  const low = Math.floor(position)
  const high = Math.ceil(position)
  const a = sorted[low] as number
  const b = sorted[high] as number
  return a + (b - a) * (position - low)
}

export const median = (values: readonly number[]): number => quantile(values, 0.5)

// A collection before each batch, where the runtime lets us, so one candidate's garbage is not
// collected on the next one's clock.
const collect: () => void = (() => {
  const g = globalThis as { gc?: () => void; Bun?: { gc(force: boolean): void } }
  if (typeof g.gc === 'function') return g.gc
  const bun = g.Bun
  if (bun) return () => bun.gc(true)
  return () => {}
})()

export const canCollect = (): boolean => {
  const g = globalThis as { gc?: unknown; Bun?: unknown }
  return typeof g.gc === 'function' || g.Bun !== undefined
}

/**
 * Calls in chunks of `chunk` until `ms` have passed; returns nanoseconds per call. Ending on time
 * rather than on a count fixed at calibration keeps a batch its intended length when a runtime
 * speeds up after warm-up (Deno's Web Crypto does, by an order of magnitude at 1 KiB).
 */
async function batch(prepared: Prepared, chunk: number, ms: number, label: string, clock?: () => number): Promise<number> {
  const { call } = prepared
  let ok = 0
  let n = 0
  let elapsed = 0
  const clockStart = clock?.() ?? 0
  const start = performance.now()
  do {
    if (prepared.async) {
      for (let i = 0; i < chunk; i++) if (await call()) ok++
    } else {
      for (let i = 0; i < chunk; i++) if (call()) ok++
    }
    n += chunk
    elapsed = performance.now() - start
  } while (elapsed < ms)
  const spent = clock === undefined ? elapsed : clock() - clockStart
  if (ok !== n) throw new Error(`${label}: ${n - ok} of ${n} calls did not verify`)
  return (spent * 1e6) / n
}

/** Runs a candidate for `ms`; returns a chunk size that reads the clock about 20 times a batch. */
async function calibrate(prepared: Prepared, ms: number, batchMs: number, label: string): Promise<number> {
  let chunk = 1
  let perCallNs = Number.POSITIVE_INFINITY
  const start = performance.now()
  while (performance.now() - start < ms) {
    perCallNs = await batch(prepared, chunk, 0, label)
    if (perCallNs * chunk < (ms * 1e6) / 8) chunk *= 2
  }
  return Math.max(1, Math.floor((batchMs * 1e6) / 20 / perCallNs))
}

export async function measure(payloads: readonly Payload[], candidates: readonly Candidate[], options: Options): Promise<PayloadResult[]> {
  const measured = await measureSamples(payloads, candidates, options)
  return measured.map(({ sample: p, candidates: summary }) => ({
    id: p.id,
    shape: p.shape,
    size: p.size,
    sizeLabel: p.sizeLabel,
    candidates: summary,
  }))
}

/** {@link measure} for any kind of body: each sample with its candidates' figures. */
export async function measureSamples<S extends Sample>(
  samples: readonly S[],
  candidates: readonly Candidate<S>[],
  options: Options,
): Promise<{ sample: S; candidates: CandidateResult[] }[]> {
  const { rounds, batchMs, warmupMs, floor, clock, log = () => {} } = options
  if (!candidates.some((c) => c.name === floor)) throw new Error(`no floor candidate named ${floor}`)
  const results: { sample: S; candidates: CandidateResult[] }[] = []
  for (const sample of samples) {
    const chunks = new Map<string, number>()
    for (const candidate of candidates) {
      const label = `${candidate.name} @ ${sample.id}`
      chunks.set(candidate.name, await calibrate(await candidate.prepare(sample), warmupMs, batchMs, label))
    }
    const times = new Map<string, number[]>(candidates.map((c) => [c.name, []]))
    const ratios = new Map<string, number[]>(candidates.map((c) => [c.name, []]))
    for (let round = 0; round < rounds; round++) {
      // Rotating the order keeps any position effect (a cache warmed by the previous candidate, a
      // collection that lands late) from favouring one candidate every round.
      const order = candidates.map((_, i) => candidates[(i + round) % candidates.length] as Candidate<S>)
      const ns = new Map<string, number>()
      for (const candidate of order) {
        const prepared = await candidate.prepare(sample)
        collect()
        ns.set(
          candidate.name,
          await batch(prepared, chunks.get(candidate.name) as number, batchMs, `${candidate.name} @ ${sample.id}`, clock),
        )
      }
      const floorNs = ns.get(floor) as number
      for (const [name, value] of ns) {
        times.get(name)?.push(value)
        ratios.get(name)?.push(value / floorNs)
      }
    }
    const summary = candidates.map((c): CandidateResult => {
      const r = ratios.get(c.name) as number[]
      return {
        name: c.name,
        ns: median(times.get(c.name) as number[]),
        ratio: median(r),
        q1: quantile(r, 0.25),
        q3: quantile(r, 0.75),
        rounds: r.length,
      }
    })
    results.push({ sample: sample, candidates: summary })
    log(`${sample.id}: ${summary.map((c) => `${c.name} ${c.ratio.toFixed(2)}x`).join(', ')}`)
  }
  return results
}

/** The one line a child process prints for the parent to read its figures. */
export const RESULT_PREFIX = '@@result '
