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
 */

import { createHmac } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serve } from '@hono/node-server'
import { webhook as expressWebhook } from '@hookguard/express'
import { webhook as honoWebhook, type WebhookDelivery, type WebhookVariables } from '@hookguard/hono'
import { webhook as koaWebhook } from '@hookguard/koa'
import { bodyParser } from '@koa/bodyparser'
import { Hono, type MiddlewareHandler } from 'hono'

export const FRAMEWORKS = ['express4', 'express5', 'koa3', 'hono'] as const
export type Framework = (typeof FRAMEWORKS)[number]
/** `control` is a second copy of `hmac`: the bench's measure of its own noise. */
export type Variant = 'baseline' | 'hmac' | 'control' | 'webhook'
export const VARIANTS: readonly Variant[] = ['baseline', 'hmac', 'control', 'webhook']
export type ServerMessage = { port: number } | { cpu: NodeJS.CpuUsage }

export const SECRET = 'hookguard-bench-secret-7d1e4c2b9a'
export const PATH = '/hooks'

// The bench package has no @types for Express and Koa (the adapters' packages do), so the little
// used here is typed locally.
type Handler = (req: { body: unknown }, res: { status(code: number): { end(): void } }, next: () => void) => void
interface ExpressApp {
  post(path: string, ...handlers: unknown[]): void
  listen(port: number, host: string, done: () => void): { address(): AddressInfo | string | null }
}
interface ExpressModule {
  (): ExpressApp
  json(options?: { verify?: (req: unknown, res: unknown, raw: Buffer) => void }): Handler
}
interface KoaContext {
  request: { body?: unknown; rawBody?: string }
  status: number
}
type KoaMiddleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>
interface KoaApp {
  use(middleware: unknown): KoaApp
  listen(port: number, host: string, done: () => void): { address(): AddressInfo | string | null }
}

/** Every variant must reach the handler with the parsed payload; anything else answers 500. */
// A specifier held in a variable keeps TypeScript from looking for declarations that are not installed.
const importUntyped = (specifier: string): Promise<{ default: unknown }> => import(specifier)

const isDelivery = (body: unknown) => (body as { event?: unknown } | undefined)?.event === 'customer.updated'

const auth = { mode: 'secret', secret: SECRET } as const

const HMAC_KEY = Buffer.from(SECRET)
/** The `hmac` variant's extra work: what verifying costs at the very least, its result unused. */
const bareHmac = (bytes: Buffer | string) => createHmac('sha256', HMAC_KEY).update(bytes).digest('hex')

async function start(framework: Framework, variant: Variant): Promise<number> {
  const addressOf = (server: { address(): AddressInfo | string | null }) => (server.address() as AddressInfo).port
  switch (framework) {
    case 'express4':
    case 'express5': {
      const express = (await importUntyped(framework === 'express4' ? 'express4' : 'express')).default as ExpressModule
      const app = express()
      const handler: Handler = (req, res) => res.status(isDelivery(req.body) ? 204 : 500).end()
      const parser = variant === 'hmac' ? express.json({ verify: (_req, _res, raw) => bareHmac(raw) }) : express.json()
      app.post(PATH, variant === 'webhook' ? expressWebhook({ auth }) : parser, handler)
      return new Promise((resolve) => {
        const server = app.listen(0, '127.0.0.1', () => resolve(addressOf(server)))
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
      app.use(variant === 'webhook' ? koaWebhook({ auth }) : variant === 'hmac' ? parseAndHash : parser)
      app.use((ctx: KoaContext) => {
        ctx.status = isDelivery(ctx.request.body) ? 204 : 500
      })
      return new Promise((resolve) => {
        const server = app.listen(0, '127.0.0.1', () => resolve(addressOf(server)))
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
      app.post(PATH, variant === 'webhook' ? honoWebhook({ auth }) : parse, (c) =>
        c.body(null, isDelivery(c.get('webhook').payload) ? 204 : 500),
      )
      return new Promise((resolve) => {
        serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => resolve(info.port))
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
