/**
 * One receiver per process, so that its resident memory is its own: started by `run.ts` as
 * `node --expose-gc --conditions=@hookguard/source --import tsx load/server.ts <framework>`.
 * It prints `{"port":N}` on stdout once listening on 127.0.0.1, answers `{ type: 'memory' }` over
 * IPC, and exits when the parent goes away, so a killed run leaves no server behind.
 *
 * Runnable by hand too (`npx tsx --conditions=@hookguard/source load/server.ts koa3`) to
 * point autocannon or curl at it; without IPC it runs until interrupted.
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import type { WebhookOptions } from '@hookguard/core'
import * as forExpress from '@hookguard/express'
import * as forHono from '@hookguard/hono'
import * as forKoa from '@hookguard/koa'
import express5 from 'express'
import express4 from 'express4'
import { Hono } from 'hono'
import Koa3 from 'koa'
import Koa2 from 'koa2'
import {
  BASIC_OPTIONS,
  CASE_HEADER,
  DELIVERY_HEADER,
  FRAMEWORKS,
  type Framework,
  PATHS,
  SECRET_OPTIONS,
  type ServerReply,
  type ServerRequest,
} from './settings.ts'

const ROUTES: ReadonlyArray<readonly [string, WebhookOptions]> = [
  [PATHS.secret, SECRET_OPTIONS],
  [PATHS.basic, BASIC_OPTIONS],
]

/** The handler answers with the delivery's id, so the generator can tell whose payload it got. */
function answerOf(payload: unknown): { id: unknown } {
  return { id: (payload as { id?: unknown } | null)?.id }
}

function expressServer(createApp: typeof express5): Server {
  const app = createApp()
  app.disable('x-powered-by')
  app.use((req, res, next) => {
    res.setHeader(CASE_HEADER, req.headers[CASE_HEADER] ?? '')
    res.setHeader(DELIVERY_HEADER, req.headers[DELIVERY_HEADER] ?? '')
    next()
  })
  for (const [path, options] of ROUTES) {
    app.post(path, forExpress.webhook(options), (req, res) => {
      res.json(answerOf(req.webhook?.payload))
    })
  }
  return app.listen(0, '127.0.0.1')
}

function koaServer(KoaClass: typeof Koa3): Server {
  const app = new KoaClass()
  const routes = new Map(ROUTES.map(([path, options]) => [path, forKoa.webhook(options)]))
  app.use(async (ctx, next) => {
    ctx.set(CASE_HEADER, ctx.get(CASE_HEADER))
    ctx.set(DELIVERY_HEADER, ctx.get(DELIVERY_HEADER))
    const hook = ctx.method === 'POST' ? routes.get(ctx.path) : undefined
    if (hook === undefined) return next()
    return hook(ctx, async () => {
      ctx.body = answerOf(ctx.state.webhook?.payload)
    })
  })
  return app.listen(0, '127.0.0.1')
}

function honoServer(): Server {
  const app = new Hono()
  app.use(async (c, next) => {
    await next()
    // After next(): a refused request's answer is the Response the middleware built, which
    // headers prepared before next() would not reach.
    c.res.headers.set(CASE_HEADER, c.req.header(CASE_HEADER) ?? '')
    c.res.headers.set(DELIVERY_HEADER, c.req.header(DELIVERY_HEADER) ?? '')
  })
  for (const [path, options] of ROUTES) {
    app.post(path, forHono.webhook(options), (c) => c.json(answerOf(c.get('webhook').payload)))
  }
  return serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server
}

function start(framework: Framework): Server {
  switch (framework) {
    case 'express5':
      return expressServer(express5)
    case 'express4':
      return expressServer(express4)
    case 'koa3':
      return koaServer(Koa3)
    case 'koa2':
      return koaServer(Koa2)
    case 'hono':
      return honoServer()
  }
}

function memory(gc: boolean): ServerReply {
  // Only with --expose-gc; without it the figures include garbage not yet collected.
  if (gc) (globalThis as { gc?: () => void }).gc?.()
  const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage()
  return { type: 'memory', rss, heapUsed, external, arrayBuffers }
}

const framework = process.argv[2]
if (!FRAMEWORKS.includes(framework as Framework)) {
  console.error(`usage: server.ts <${FRAMEWORKS.join('|')}>`)
  process.exit(2)
}

const server = start(framework as Framework)
server.once('listening', () => {
  const { port } = server.address() as AddressInfo
  process.stdout.write(`${JSON.stringify({ port })}\n`)
})

if (process.send !== undefined) {
  process.on('message', (message: ServerRequest) => {
    if (message.type === 'memory') process.send?.(memory(message.gc))
  })
  // The parent died or gave up on us: nobody will ever ask this server anything again.
  process.on('disconnect', () => process.exit(0))
}
