/**
 * Target 5: how many extra copies of a 1 MiB body `verifySignature` holds. Start it through run.ts,
 * or alone: `node --expose-gc --import tsx bench/memory.ts`.
 *
 * Method: collect, read `process.memoryUsage()`, verify once, read again before anything can
 * collect. The growth of `arrayBuffers` (where every `Uint8Array`/`Buffer` copy lives) and of
 * `heapUsed` (where a decoded string would live) is everything the call allocated and left for the
 * collector, so it bounds from above what was alive at any one moment. A trial in which a
 * collection ran anyway would undercount, so such trials are dropped.
 */
import { PerformanceObserver } from 'node:perf_hooks'
import { sign, verifySignature } from '@hookguard/core'
import { median, RESULT_PREFIX } from './measure.ts'
import { makePayload, type Shape } from './payload.ts'

const SECRET = 'hookguard-bench-secret-7d1e4c2b9a'
const SIZE = 1024 * 1024
const TRIALS = process.argv.includes('--quick') ? 3 : 8

const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('memory: start node with --expose-gc')

// Entries arrive late, so a trial is judged by whether a collection started inside its window.
const collections: number[] = []
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) collections.push(entry.startTime)
}).observe({ entryTypes: ['gc'] })
const settle = () => new Promise((resolve) => setTimeout(resolve, 5))

export interface MemoryResult {
  shape: Shape
  /** Median growth over the kept trials, in bytes. */
  arrayBuffers: number
  heap: number
  /** (arrayBuffers + heap) / body size. */
  copies: number
  /** The largest trial's (arrayBuffers + heap) / body size. */
  maxCopies: number
  trials: number
}

async function measureShape(shape: Shape): Promise<MemoryResult> {
  const { bytes } = makePayload(shape, SIZE, '1 MiB')
  const body = Buffer.from(bytes)
  const header = await sign(body, SECRET)
  // The first calls compile and cache the key; only later ones show the steady state.
  for (let i = 0; i < 5; i++) await verifySignature(body, header, SECRET)
  // Medians: the heap also grows by whatever else the process allocates meanwhile (promises,
  // timers), which now and then adds a few hundred KiB to one trial.
  const buffers: number[] = []
  const heaps: number[] = []
  for (let trial = 0; trial < TRIALS * 3 && buffers.length < TRIALS; trial++) {
    gc?.()
    await settle()
    const start = performance.now()
    const before = process.memoryUsage()
    const ok = await verifySignature(body, header, SECRET)
    const after = process.memoryUsage()
    const end = performance.now()
    await settle()
    if (!ok) throw new Error(`memory: ${shape} did not verify`)
    if (collections.some((t) => t >= start && t <= end)) continue
    buffers.push(Math.max(0, after.arrayBuffers - before.arrayBuffers))
    heaps.push(Math.max(0, after.heapUsed - before.heapUsed))
  }
  if (buffers.length === 0) throw new Error(`memory: a collection ran during every ${shape} trial`)
  const arrayBuffers = median(buffers)
  const heap = median(heaps)
  const maxCopies = Math.max(...buffers.map((b, i) => b + (heaps[i] as number))) / SIZE
  return { shape, arrayBuffers, heap, copies: (arrayBuffers + heap) / SIZE, maxCopies, trials: buffers.length }
}

const results: MemoryResult[] = []
for (const shape of ['compact', 'pretty', 'gson'] as const) results.push(await measureShape(shape))
for (const r of results) {
  console.error(
    `memory: ${r.shape}: +${(r.arrayBuffers / 1024).toFixed(0)} KiB buffers, +${(r.heap / 1024).toFixed(0)} KiB heap = ${r.copies.toFixed(2)} copies`,
  )
}
console.log(RESULT_PREFIX + JSON.stringify({ runtime: `node ${process.version}`, size: SIZE, results }))
