/**
 * One server for the HTTP benchmark, in its own process so its CPU time is its own: forked by
 * http.ts as `http-server.ts <framework> <variant>`, it listens on a loopback port, sends
 * the port over IPC, and answers each `cpu` message with `process.cpuUsage()`.
 *
 * All variants run the same handler behind one middleware; the only difference is that
 * middleware: the framework's usual JSON parser (`baseline`); that parser plus one bare HMAC of the
 * raw bytes, the least any verification can cost (`hmac`); or `webhook()`, which verifies and then
 * parses. One middleware each, since the frameworks charge for every layer a request passes
 * through (Hono answers a route with a single handler without composing a chain at all), and
 * `webhook()` is one layer. `control` runs `hmac` again, for http.ts to measure its own noise.
 *
 * `reference` is the verifier outside reviewers compare us with, written the plainest fast way in
 * each framework and with no parser in front: the raw body collected from the request stream, one
 * `createHmac` over it, its hex compared with the header's by `crypto.timingSafeEqual`, then
 * `JSON.parse`. It checks no limit, no length and no case, so it is what a verifier can cost that
 * does nothing more; the parsers behind the other controls cost more than it does (Koa's most).
 * The delivery has spaces in its values, as the service's Gson output has, so the service signs
 * the text without them (which `webhook()` makes before it hashes); a verifier that hashes the
 * bytes as received cannot check that signature, so the reference reads a signature of the bytes
 * as sent from a header of its own, which every server receives alike.
 */

import { createHmac, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { AddressInfo, Server } from 'node:net'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serve } from '@hono/node-server'
import { sign } from '@hookguard/core'
import { webhook as expressWebhook } from '@hookguard/express'
import { webhook as honoWebhook, type WebhookDelivery, type WebhookVariables } from '@hookguard/hono'
import { webhook as koaWebhook } from '@hookguard/koa'
import { makePayload } from '@hookguard/testkit/payload'
import { bodyParser } from '@koa/bodyparser'
import { Hono, type MiddlewareHandler } from 'hono'

export const FRAMEWORKS = ['express4', 'express5', 'koa3', 'hono'] as const
export type Framework = (typeof FRAMEWORKS)[number]
/** `control` is a second copy of `hmac`: the bench's measure of its own noise. */
export type Variant = 'baseline' | 'hmac' | 'control' | 'reference' | 'webhook'
export const VARIANTS: readonly Variant[] = ['baseline', 'hmac', 'control', 'reference', 'webhook']
export type ServerMessage = { port: number } | { cpu: NodeJS.CpuUsage }

export const SECRET = 'hookguard-bench-secret-7d1e4c2b9a'
export const PATH = '/hooks'
const KEEP_ALIVE_MS = 300_000

// The bench package has no @types for Express and Koa (the adapters' packages do), so the little
// used here is typed locally.
type Handler = (req: IncomingMessage & { body?: unknown }, res: { status(code: number): { end(): void } }, next: () => void) => void
interface ExpressApp {
  post(path: string, ...handlers: unknown[]): void
  listen(port: number, host: string, done: () => void): Server
}
interface ExpressModule {
  (): ExpressApp
  json(options?: { verify?: (req: unknown, res: unknown, raw: Buffer) => void }): Handler
}
interface KoaContext {
  req: IncomingMessage
  request: { body?: unknown; rawBody?: string }
  status: number
}
type KoaMiddleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>
interface KoaApp {
  use(middleware: unknown): KoaApp
  listen(port: number, host: string, done: () => void): Server
}

/** Every variant must reach the handler with the parsed payload; anything else answers 500. */
// A specifier held in a variable keeps TypeScript from looking for declarations that are not installed.
const importUntyped = (specifier: string): Promise<{ default: unknown }> => import(specifier)

const isDelivery = (body: unknown) => (body as { event?: unknown } | undefined)?.event === 'customer.updated'

const auth = { mode: 'secret', secret: SECRET } as const

const HMAC_KEY = Buffer.from(SECRET)
/** The `hmac` variant's extra work: what verifying costs at the very least, its result unused. */
const bareHmac = (bytes: Buffer | string) => createHmac('sha256', HMAC_KEY).update(bytes).digest('hex')

/** Where the `reference` variant finds its signature: an HMAC of the bytes as sent (see the top of this file). */
const REFERENCE_HEADER = 'x-reference-signature'

/** The delivery every server is sent: a 1 KiB Gson body, the service's signature, and the reference's. */
export async function benchDelivery(): Promise<{ body: string; headers: Record<string, string> }> {
  const payload = makePayload('gson', 1024, '1 KiB')
  const headers = {
    'content-type': 'application/json',
    'x-service-hmac-signature': await sign(payload.bytes, SECRET),
    [REFERENCE_HEADER]: createHmac('sha256', SECRET).update(payload.bytes).digest('hex'),
  }
  return { body: payload.text, headers }
}

/** The `reference` variant's check: one HMAC of the raw bytes, its hex against the header's, in constant time. */
export function referenceVerify(raw: Buffer, header: string | undefined): boolean {
  if (header === undefined) return false
  const expected = Buffer.from(createHmac('sha256', HMAC_KEY).update(raw).digest('hex'))
  const given = Buffer.from(header)
  return expected.length === given.length && timingSafeEqual(expected, given)
}

/** The `reference` variant's body: the request stream's chunks, joined. */
export function referenceBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

export const headerOf = (req: IncomingMessage) => req.headers[REFERENCE_HEADER] as string | undefined

async function start(framework: Framework, variant: Variant): Promise<number> {
  const addressOf = (server: Server) => (server.address() as AddressInfo).port
  // Under callgrind one turn of the event loop can outlast Node's 5 s keep-alive timeout, which
  // then closes a connection whose next request is already on its way (a reset for the client).
  const keepAlive = <T>(server: T) => {
    ;(server as { keepAliveTimeout: number }).keepAliveTimeout = KEEP_ALIVE_MS
    return server
  }
  switch (framework) {
    case 'express4':
    case 'express5': {
      const express = (await importUntyped(framework === 'express4' ? 'express4' : 'express')).default as ExpressModule
      const app = express()
      const handler: Handler = (req, res) => res.status(isDelivery(req.body) ? 204 : 500).end()
      const parser = variant === 'hmac' ? express.json({ verify: (_req, _res, raw) => bareHmac(raw) }) : express.json()
      const reference: Handler = (req, res, next) => {
        referenceBody(req).then((raw) => {
          if (!referenceVerify(raw, headerOf(req))) return res.status(401).end()
          req.body = JSON.parse(raw.toString('utf8'))
          next()
        }, next)
      }
      const middleware = variant === 'webhook' ? expressWebhook({ auth }) : variant === 'reference' ? reference : parser
      app.post(PATH, middleware, handler)
      return new Promise((resolve) => {
        const server = keepAlive(app.listen(0, '127.0.0.1', () => resolve(addressOf(server))))
      })
    }
    case 'koa3': {
      const Koa = (await importUntyped('koa')).default as new () => KoaApp
      const app = new Koa()
      const parser = bodyParser() as unknown as KoaMiddleware
      // The parser has no hook for the raw bytes, so the HMAC runs in the same layer, as it runs
      // inside express.json() above.
      const parseAndHash: KoaMiddleware = (ctx, next) =>
        parser(ctx, () => {
          bareHmac(ctx.request.rawBody ?? '')
          return next()
        })
      const reference: KoaMiddleware = async (ctx, next) => {
        const raw = await referenceBody(ctx.req)
        if (!referenceVerify(raw, headerOf(ctx.req))) {
          ctx.status = 401
          return
        }
        ctx.request.body = JSON.parse(raw.toString('utf8'))
        await next()
      }
      const controls = { baseline: parser, hmac: parseAndHash, control: parseAndHash, reference }
      app.use(variant === 'webhook' ? koaWebhook({ auth }) : controls[variant])
      app.use((ctx: KoaContext) => {
        ctx.status = isDelivery(ctx.request.body) ? 204 : 500
      })
      return new Promise((resolve) => {
        const server = keepAlive(app.listen(0, '127.0.0.1', () => resolve(addressOf(server))))
      })
    }
    case 'hono': {
      const app = new Hono<{ Variables: WebhookVariables }>()
      // Hono has no JSON parser middleware of its own, only `c.req.json()`: the controls call it
      // (as text, for the HMAC) in a middleware that hands the payload on as webhook() does.
      const parse: MiddlewareHandler<{ Variables: WebhookVariables }> = async (c, next) => {
        let payload: unknown
        if (variant === 'hmac') {
          const text = await c.req.text()
          bareHmac(text)
          payload = JSON.parse(text)
        } else {
          payload = await c.req.json()
        }
        c.set('webhook', { payload } as WebhookDelivery)
        await next()
      }
      // Hono's plain way to the raw bytes and a header: the request's own body and headers.
      const reference: MiddlewareHandler<{ Variables: WebhookVariables }> = async (c, next) => {
        const raw = Buffer.from(await c.req.arrayBuffer())
        if (!referenceVerify(raw, c.req.header(REFERENCE_HEADER))) return c.body(null, 401)
        c.set('webhook', { payload: JSON.parse(raw.toString('utf8')) } as WebhookDelivery)
        await next()
      }
      const middleware = variant === 'webhook' ? honoWebhook({ auth }) : variant === 'reference' ? reference : parse
      app.post(PATH, middleware, (c) => c.body(null, isDelivery(c.get('webhook').payload) ? 204 : 500))
      return new Promise((resolve) => {
        keepAlive(serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => resolve(info.port)))
      })
    }
  }
}

// http.ts imports this file for its constants; only a forked copy starts a server.
const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)
if (isMain && process.send) {
  const [framework, variant] = process.argv.slice(2) as [Framework, Variant]
  if (!FRAMEWORKS.includes(framework) || !VARIANTS.includes(variant)) {
    throw new Error(`http-server: unknown ${framework} ${variant}`)
  }
  const port = await start(framework, variant === 'control' ? 'hmac' : variant)
  process.on('message', (message) => {
    if (message === 'cpu') process.send?.({ cpu: process.cpuUsage() } satisfies ServerMessage)
  })
  // Dies with the parent, however the parent ends.
  process.on('disconnect', () => process.exit(0))
  process.send({ port } satisfies ServerMessage)
}
