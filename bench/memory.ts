/**
 * Target 5: how many extra copies of a 1 MiB body `verifySignature` holds. Start it through run.ts,
 * or alone: `node --expose-gc --import tsx bench/memory.ts`.
 *
 * Method: collect, read `process.memoryUsage()`, verify once, read again before anything can
 * collect. The growth of `arrayBuffers` (where every `Uint8Array`/`Buffer` copy lives) and of
 * `heapUsed` (where a decoded string would live) is everything the call allocated and left for the
 * collector, so it bounds from above what was alive at any one moment. A trial in which a
 * collection ran anyway would undercount, so such trials are dropped.
 *
 * WebAssembly memory (the Node build's whitespace stripper works in its own) shows in neither
 * figure, so it is traced: every instance made is wrapped to record the bytes copied into it per
 * call (the length argument of its `strip` and `scan` exports: a compact body is scanned there,
 * 16 KiB at a time) and the size its memory has grown to, which it keeps.
 */
import { createHmac } from 'node:crypto'
import { Session } from 'node:inspector/promises'
import { PerformanceObserver } from 'node:perf_hooks'
import { makePayload, type Shape } from '@hookguard/testkit/payload'
import { median, RESULT_PREFIX } from './measure.ts'

/** Bytes handed to WebAssembly `strip` and `scan` exports since the last reset, and the memories seen. */
const wasm = { copiedIn: 0, memories: new Set<WebAssembly.Memory>() }
const NativeInstance = WebAssembly.Instance
class TracedInstance extends NativeInstance {
  readonly #exports: WebAssembly.Exports
  constructor(module: WebAssembly.Module, imports?: WebAssembly.Imports) {
    super(module, imports)
    type Kernel = (ptr: number, len: number) => number
    const real = super.exports as { memory?: WebAssembly.Memory; strip?: Kernel; scan?: Kernel }
    if (real.memory) wasm.memories.add(real.memory)
    const traced = (kernel: Kernel) => (ptr: number, len: number) => {
      wasm.copiedIn += len
      return kernel(ptr, len)
    }
    const { strip, scan } = real
    this.#exports = strip === undefined || scan === undefined ? real : Object.freeze({ ...real, strip: traced(strip), scan: traced(scan) })
  }
  override get exports(): WebAssembly.Exports {
    return this.#exports
  }
}
WebAssembly.Instance = TracedInstance
// Imported after the trace is in place; the stripper's instance is made on first use anyway.
const { createReceiver, sign, verifySignature } = await import('@hookguard/core')
const wasmRetained = () => [...wasm.memories].reduce((sum, memory) => sum + memory.buffer.byteLength, 0)

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
  /** Median bytes copied into WebAssembly memory by the call. */
  wasmCopiedIn: number
  /** (arrayBuffers + heap + wasmCopiedIn) / body size. */
  copies: number
  /** The largest trial's (arrayBuffers + heap + wasmCopiedIn) / body size. */
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
  const copiedIn: number[] = []
  for (let trial = 0; trial < TRIALS * 3 && buffers.length < TRIALS; trial++) {
    gc?.()
    await settle()
    const start = performance.now()
    const before = process.memoryUsage()
    wasm.copiedIn = 0
    const ok = await verifySignature(body, header, SECRET)
    const wasmCopied = wasm.copiedIn
    const after = process.memoryUsage()
    const end = performance.now()
    await settle()
    if (!ok) throw new Error(`memory: ${shape} did not verify`)
    if (collections.some((t) => t >= start && t <= end)) continue
    buffers.push(Math.max(0, after.arrayBuffers - before.arrayBuffers))
    heaps.push(Math.max(0, after.heapUsed - before.heapUsed))
    copiedIn.push(wasmCopied)
  }
  if (buffers.length === 0) throw new Error(`memory: a collection ran during every ${shape} trial`)
  const arrayBuffers = median(buffers)
  const heap = median(heaps)
  const wasmCopiedIn = median(copiedIn)
  const maxCopies = Math.max(...buffers.map((b, i) => b + (heaps[i] as number) + (copiedIn[i] as number))) / SIZE
  return { shape, arrayBuffers, heap, wasmCopiedIn, copies: (arrayBuffers + heap + wasmCopiedIn) / SIZE, maxCopies, trials: buffers.length }
}

/**
 * Heap bytes allocated per verified 1 KiB delivery: by `createReceiver().verify()` (a Node
 * adapter's call, the body handed over as the bytes read), and by the floor of the HTTP bench
 * (decode, one `createHmac`, `JSON.parse`). Inside a loaded server each byte is paid again by the
 * young-generation collector, which the server runs between requests; unlike a time, the count
 * does not move with the host's load. Counted by V8's sampling heap profiler, keeping the objects
 * that minor and major collections freed.
 */
export interface AllocationResult {
  receiver: number
  floor: number
}

const ALLOCATION_CALLS = process.argv.includes('--quick') ? 2_000 : 20_000

async function allocationPerDelivery(): Promise<AllocationResult> {
  const body = Buffer.from(makePayload('gson', 1024, '1 KiB').bytes)
  const header = await sign(body, SECRET)
  const headers = [
    'Host',
    '127.0.0.1',
    'Content-Type',
    'application/json',
    'X-Service-Hmac-Signature',
    header,
    'Content-Length',
    String(body.length),
  ]
  const receiver = createReceiver({ auth: { mode: 'secret', secret: SECRET } })
  const read = Promise.resolve(body)
  const key = Buffer.from(SECRET)
  const receiverCall = async () => {
    const result = await receiver.verify({ method: 'POST', url: '/webhooks', headers, body: () => read })
    if (!result.ok) throw new Error('memory: the 1 KiB delivery did not verify')
  }
  const floorCall = async () => {
    const text = (await read).toString()
    createHmac('sha256', key).update(text).digest('hex')
    JSON.parse(text)
  }
  const session = new Session()
  session.connect()
  await session.post('HeapProfiler.enable')
  const bytesPerCall = async (call: () => Promise<void>) => {
    for (let i = 0; i < ALLOCATION_CALLS; i++) await call()
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 64,
      includeObjectsCollectedByMinorGC: true,
      includeObjectsCollectedByMajorGC: true,
    })
    for (let i = 0; i < ALLOCATION_CALLS; i++) await call()
    const { profile } = await session.post('HeapProfiler.stopSampling')
    let total = 0
    const walk = (node: typeof profile.head) => {
      total += node.selfSize
      for (const child of node.children) walk(child)
    }
    walk(profile.head)
    return total / ALLOCATION_CALLS
  }
  const result = { receiver: await bytesPerCall(receiverCall), floor: await bytesPerCall(floorCall) }
  session.disconnect()
  return result
}

const results: MemoryResult[] = []
for (const shape of ['compact', 'pretty', 'gson'] as const) results.push(await measureShape(shape))
const allocation = await allocationPerDelivery()
console.error(`memory: a verified 1 KiB delivery allocates ${allocation.receiver.toFixed(0)} B, the floor ${allocation.floor.toFixed(0)} B`)
for (const r of results) {
  console.error(
    `memory: ${r.shape}: +${(r.arrayBuffers / 1024).toFixed(0)} KiB buffers, +${(r.heap / 1024).toFixed(0)} KiB heap, ` +
      `${(r.wasmCopiedIn / 1024).toFixed(0)} KiB into WebAssembly memory = ${r.copies.toFixed(2)} copies`,
  )
}
const retained = wasmRetained()
console.error(`memory: WebAssembly memory kept between calls: ${(retained / 1024).toFixed(0)} KiB`)
console.log(RESULT_PREFIX + JSON.stringify({ runtime: `node ${process.version}`, size: SIZE, wasmRetained: retained, results, allocation }))
