/**
 * Timing for the cost tests (test/robustness/complexity.test.ts, packages/core/test/verification-cost.test.ts):
 * by this process's CPU time, steadier than the wall clock on a shared machine, the sizes or the
 * candidates interleaved and medians taken, so that the tests judge ratios, never absolute times.
 */

/** User plus system CPU of this process so far, in ms. */
export const cpuMs = (): number => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

/** CPU ms per call over `calls` calls. */
export async function perCall(call: () => Promise<unknown>, calls: number): Promise<number> {
  const start = cpuMs()
  for (let i = 0; i < calls; i++) await call()
  return (cpuMs() - start) / calls
}

/** How many calls make a batch of about `batchMs` of CPU (one, for a call that takes longer). */
export async function batchSize(call: () => Promise<unknown>, batchMs: number): Promise<number> {
  const start = cpuMs()
  let calls = 0
  while (cpuMs() - start < batchMs / 2 && calls < 10_000) {
    await call()
    calls++
  }
  return Math.max(1, Math.round((calls * batchMs) / Math.max(cpuMs() - start, 0.001)))
}

export interface Ratio {
  ratio: number
  /** Median CPU ms per call of each side. */
  aMs: number
  bMs: number
}

export interface RatioOptions {
  rounds: number
  /** Calls are batched to about this many ms of CPU of `a`, so the clock's resolution does not matter. */
  batchMs: number
  /** CPU ms after which no further round is started (a quadratic path's one round can take seconds). */
  budgetMs: number
}

/** time(b) / time(a), the two interleaved and their order alternated round by round. */
export async function timeRatio(a: () => Promise<unknown>, b: () => Promise<unknown>, options: RatioOptions): Promise<Ratio> {
  const calls = await batchSize(a, options.batchMs)
  const aTimes: number[] = []
  const bTimes: number[] = []
  const start = cpuMs()
  for (let round = 0; round < options.rounds && (round === 0 || cpuMs() - start < options.budgetMs); round++) {
    if (round % 2 === 0) {
      aTimes.push(await perCall(a, calls))
      bTimes.push(await perCall(b, calls))
    } else {
      bTimes.push(await perCall(b, calls))
      aTimes.push(await perCall(a, calls))
    }
  }
  const aMs = median(aTimes)
  const bMs = median(bTimes)
  return { ratio: bMs / Math.max(aMs, 1e-6), aMs, bMs }
}

/**
 * {@link timeRatio}, looked at again (each look twice as long, after a pause) while it reads `limit`
 * or more, at most `looks` times more, and the least of the looks. Load on a shared machine raises a
 * reading far more often than it lowers it: another process on the same core leaves the caches
 * cold, and the path under test reads more memory than an HMAC does, so it loses more to them; the
 * least look is the closest to the path's own cost. A pause lets a neighbour's burst (another test
 * file's work) pass: beside a whole `pnpm test`, the ratio of one refusal to one HMAC (8.7 on a
 * quiet machine) read 9.7 to 10.1 in the median, up to 14 in one look, up to 12.7 as the least of
 * three looks back to back, and at most 12.0 as the least of looks half a second apart. A path that
 * really costs that much reads it in every look.
 */
export async function settledRatio(
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
  limit: number,
  options: RatioOptions,
  looks = 4,
  pauseMs = 500,
): Promise<Ratio> {
  let least = await timeRatio(a, b, options)
  for (let look = 0; look < looks && least.ratio >= limit; look++) {
    await new Promise((resolve) => setTimeout(resolve, pauseMs))
    // Longer batches too: a batch of a few ms is where a moment's load on a shared machine shows most.
    const measured = await timeRatio(a, b, { ...options, rounds: 2 * options.rounds, batchMs: 4 * options.batchMs })
    if (measured.ratio < least.ratio) least = measured
  }
  return least
}
