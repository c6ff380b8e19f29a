/**
 * Koa's `webhook()` against the reference verifier (bench/http-server.ts), in process and without
 * a socket: a fixed loop of requests through Koa's own `app.callback()`, on a Node
 * `IncomingMessage` and `ServerResponse` that no connection stands behind, one request at a time.
 * It leaves out the HTTP parser, the kernel and the load generator, which cost both servers alike,
 * and so reads what the middleware makes the process do far more steadily than the HTTP bench on a
 * busy machine. Not part of run.ts; start it alone, on the packages' builds as the benches measure
 * them (`pnpm build` first):
 *
 * `node --import tsx --expose-gc bench/koa-loop.ts <variant> <probe> [--warmup=N] [--requests=N] [--top=N]`
 *
 * The variant is `webhook`, `reference`, or the reference with the core's body reader, signature
 * check or both in place of its own (`reference-body`, `reference-signature`, `reference-both`).
 *
 * Each probe runs `--warmup` requests (4 000) first, then `--requests` (2 000) it reads:
 * - `time`: wall-clock time per request (noisy on a shared machine; the others are not).
 * - `alloc`: bytes allocated on the heap per request, from V8's sampling heap profiler with what
 *   the collector took back counted too, by the function that allocated (the first `--top`).
 * - `survivors`: what a young-generation collection finds still alive per request, and the old
 *   generation's growth, in five rounds. A finished request leaves nothing alive; what survives is
 *   copied, then promoted, and costs every collection until a major one.
 * - `count`: the window counted by callgrind alone
 *   (`valgrind --tool=callgrind --instr-atstart=no --smc-check=all-non-file node …`), which this
 *   process turns on and off with `callgrind_control`.
 * - `mark`: the window between two lines on stdout, to count what `--trace-opt`, `--trace-deopt`
 *   or `--trace-gc-nvp` print inside it.
 */
import { execFileSync } from 'node:child_process'
import { IncomingMessage, ServerResponse } from 'node:http'
import { Session } from 'node:inspector/promises'
import type { Socket } from 'node:net'
import { getHeapSpaceStatistics } from 'node:v8'
import { DEFAULT_MAX_BODY_SIZE, verifySignature } from '@hookguard/core'
import { readNodeBody } from '@hookguard/core/node'
import { webhook } from '@hookguard/koa'
import { numberFlag } from './flags.ts'
import { benchDelivery, headerOf, PATH, referenceBody, referenceVerify, SECRET } from './http-server.ts'

// The bench package has no @types for Koa (the adapter's package does): the little used here.
interface KoaContext {
  req: IncomingMessage
  request: { body?: unknown }
  status: number
}
type KoaMiddleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void> | void
interface KoaApp {
  use(middleware: unknown): KoaApp
  callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>
}

const [variant, probe] = process.argv.slice(2)
const WARMUP = numberFlag('warmup') ?? 4000
const REQUESTS = numberFlag('requests') ?? 2000

const delivery = await benchDelivery()
const body = Buffer.from(delivery.body)
const rawHeaders = Object.entries({ ...delivery.headers, 'content-length': String(body.length), host: '127.0.0.1' }).flat()

/**
 * The reference with one of the core's parts in place of its own, to tell what each part costs
 * over the reference: the core's Node body reader (a size limit, time bounds, its listeners taken
 * off once read), the core's signature check (the service's form of the body, the header's hex,
 * the constant-time comparison), or both. `webhook()` over `reference-both` is then what the
 * receiver and the adapter cost around those parts.
 */
function ablated(ownBody: boolean, ownSignature: boolean): KoaMiddleware {
  return async (ctx, next) => {
    const raw = ownBody ? await readNodeBody(ctx.req, DEFAULT_MAX_BODY_SIZE, '', body.length) : await referenceBody(ctx.req)
    const genuine = ownSignature
      ? await verifySignature(raw, ctx.req.headers['x-service-hmac-signature'] as string | undefined, SECRET)
      : referenceVerify(raw, headerOf(ctx.req))
    if (!genuine) {
      ctx.status = 401
      return
    }
    ctx.request.body = JSON.parse(raw.toString('utf8'))
    await next()
  }
}
/** The reference as bench/http-server.ts serves it on Koa: none of the core's parts. */
const reference = ablated(false, false)
const ABLATED: Record<string, KoaMiddleware> = {
  'reference-body': ablated(true, false),
  'reference-signature': ablated(false, true),
  'reference-both': ablated(true, true),
}

// A specifier held in a variable keeps TypeScript from looking for declarations that are not installed.
const koaSpecifier: string = 'koa'
const Koa = (await import(koaSpecifier)).default as new () => KoaApp
const app = new Koa()
if (variant === 'webhook') app.use(webhook({ auth: { mode: 'secret', secret: SECRET } }))
else if (variant === 'reference') app.use(reference)
else if (variant !== undefined && variant in ABLATED) app.use(ABLATED[variant])
else throw new Error(`koa-loop: the variant is webhook, reference or one of ${Object.keys(ABLATED).join(', ')}`)
app.use((ctx: KoaContext) => {
  ctx.status = (ctx.request.body as { event?: unknown } | undefined)?.event === 'customer.updated' ? 204 : 500
})
const handle = app.callback()

/** One request through Koa, its body waiting in the stream as Node's parser leaves it. */
async function once(): Promise<void> {
  const req = new IncomingMessage(null as unknown as Socket)
  req.method = 'POST'
  req.url = PATH
  req.rawHeaders = rawHeaders
  for (let i = 0; i < rawHeaders.length; i += 2) req.headers[(rawHeaders[i] as string).toLowerCase()] = rawHeaders[i + 1]
  req.push(body)
  req.push(null)
  // As the parser marks a request read to its end: destroyed unfinished, it would abort, and
  // the abort's error (with its stack) would cost more than the rest of the request.
  req.complete = true
  const res = new ServerResponse(req)
  await handle(req, res)
  if (res.statusCode !== 204) throw new Error(`koa-loop: ${variant} answered ${res.statusCode}`)
}

async function run(requests: number): Promise<void> {
  for (let i = 0; i < requests; i++) await once()
}

const gc = (globalThis as { gc?: (options?: { type: 'minor' | 'major' }) => void }).gc
const spaceUsed = (name: string) => getHeapSpaceStatistics().find((space) => space.space_name === name)?.space_used_size ?? 0
const perRequest = (bytes: number) => (bytes / REQUESTS).toFixed(0)

await run(WARMUP)
switch (probe) {
  case 'time': {
    const started = process.hrtime.bigint()
    await run(REQUESTS)
    console.log(`${variant}: ${(Number(process.hrtime.bigint() - started) / REQUESTS / 1000).toFixed(1)} µs/request (wall clock)`)
    break
  }
  case 'alloc': {
    const session = new Session()
    session.connect()
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 128,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    })
    await run(REQUESTS)
    const { profile } = await session.post('HeapProfiler.stopSampling')
    type ProfileNode = (typeof profile)['head']
    const bySite = new Map<string, number>()
    let total = 0
    const walk = (node: ProfileNode) => {
      if (node.selfSize > 0) {
        const { functionName, url, lineNumber } = node.callFrame
        const site = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(packages|node_modules)\//, '$1/')}:${lineNumber + 1}`
        bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize)
        total += node.selfSize
      }
      for (const child of node.children) walk(child)
    }
    walk(profile.head)
    console.log(`${variant}: ${perRequest(total)} B/request allocated on the heap (sampled)`)
    const top = [...bySite].sort((a, b) => b[1] - a[1]).slice(0, numberFlag('top') ?? 25)
    for (const [site, bytes] of top) console.log(`${perRequest(bytes).padStart(7)}  ${site}`)
    break
  }
  case 'survivors': {
    if (gc === undefined) throw new Error('koa-loop: survivors needs --expose-gc')
    for (let round = 0; round < 5; round++) {
      // Twice: what was young before the window is then old, or gone.
      gc({ type: 'minor' })
      gc({ type: 'minor' })
      const old = spaceUsed('old_space')
      await run(REQUESTS)
      gc({ type: 'minor' })
      console.log(
        `${variant}: ${perRequest(spaceUsed('new_space'))} B/request alive after a young collection, old generation +${perRequest(spaceUsed('old_space') - old)} B/request`,
      )
    }
    break
  }
  case 'count':
  case 'mark': {
    const counting = (on: boolean) => {
      if (probe === 'count') execFileSync('callgrind_control', ['--instr', on ? 'on' : 'off', String(process.pid)], { stdio: 'ignore' })
    }
    console.log('koa-loop: window start')
    counting(true)
    await run(REQUESTS)
    counting(false)
    console.log('koa-loop: window end')
    break
  }
  default:
    throw new Error('koa-loop: the probe is time, alloc, survivors, count or mark')
}
