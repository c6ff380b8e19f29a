import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import { getRequestListener } from '@hono/node-server'
import { createReceiver, type WebhookOptions } from '@hookguard/core'
import type { WebhookResponse } from '@hookguard/core/adapter'
import { nodeBody, nodeRequestHeaders, settleWhenAnswered } from '@hookguard/core/node'
import * as forExpress from '@hookguard/express'
import * as forFastify from '@hookguard/fastify'
import * as forKoa from '@hookguard/koa'
import { listen, type Outgoing, type Reply, sendTo, sendToFetch, type Target } from '@hookguard/testkit/http'
import express5, { type ErrorRequestHandler } from 'express'
import express4 from 'express4'
import Fastify, { type FastifyInstance } from 'fastify'
import Koa3 from 'koa'
import Koa2 from 'koa2'
import { fetchApp } from './fetch-app.ts'
import { honoApp } from './hono-app.ts'
import { type AppSettings, type Received, workDone } from './work.ts'

export type { AppSettings, Received } from './work.ts'

/** An app under test: `POST /hooks` behind `webhook(options)`, and `/token` for mode oauth2. */
export interface App extends Target {
  /** How many times the handler after `webhook()` ran. */
  handled(): number
}

export interface AppFactory {
  name: string
  /** The package the app's middleware comes from: setup mistakes are reported under its name. */
  packageName: string
  start(options: WebhookOptions, settings?: AppSettings): Promise<App>
  /** Called in process, with no server: no socket, so the cases that need one leave it out. */
  inProcess?: true
}

const decoder = new TextDecoder()

function expressFactory(name: string, createApp: typeof express5): AppFactory {
  return {
    name,
    packageName: '@hookguard/express',
    async start(options, { passOn, work } = {}) {
      let handled = 0
      const app = createApp()
      // Not 'test' (vitest's NODE_ENV): the final handler then logs every error with its stack,
      // and puts the stack in the answer, as in a developer's app.
      if (passOn !== undefined) app.set('env', 'development')
      if (options.auth.mode === 'oauth2') app.all('/token', forExpress.tokenEndpoint(options))
      const hook = forExpress.webhook(passOn === undefined ? options : { ...options, onError: 'next' })
      app.post('/hooks', hook, (req, res, next) => {
        handled++
        const delivery = req.webhook
        if (delivery === undefined) throw new Error('webhook() called next() without a delivery')
        const received: Received = {
          mode: delivery.mode,
          payload: req.body,
          rawLength: delivery.rawBody.byteLength,
          rawText: decoder.decode(delivery.rawBody),
        }
        // Express 4 does not catch a rejected promise: the error goes to next() by hand.
        workDone(work, received).then((status) => res.status(status).json(received), next)
      })
      if (passOn !== undefined) {
        const record: ErrorRequestHandler = (error, _req, _res, next) => {
          passOn(error)
          next(error)
        }
        app.use(record)
      }
      return { ...(await listen(app)), handled: () => handled }
    },
  }
}

function koaFactory(name: string, KoaClass: typeof Koa3): AppFactory {
  return {
    name,
    packageName: '@hookguard/koa',
    async start(options, { passOn, work } = {}) {
      let handled = 0
      const app = new KoaClass()
      // Koa's default app.onerror logs to stderr unless silent: quiet here, as shipped when passing
      // on, where nothing it logs may be sensitive.
      app.silent = passOn === undefined
      const token = options.auth.mode === 'oauth2' ? forKoa.tokenEndpoint(options) : undefined
      const hook = forKoa.webhook(passOn === undefined ? options : { ...options, onError: 'throw' })
      if (passOn !== undefined) {
        app.use(async (_ctx, next) => {
          try {
            await next()
          } catch (error) {
            passOn(error)
            throw error
          }
        })
      }
      app.use(async (ctx, next) => {
        if (ctx.path === '/token' && token !== undefined) return token(ctx, next)
        if (ctx.path !== '/hooks' || ctx.method !== 'POST') return next()
        return hook(ctx, async () => {
          handled++
          const delivery = ctx.state.webhook
          if (delivery === undefined) throw new Error('webhook() called next() without a delivery')
          // Where body parsers put them, so that middleware written for one keeps working.
          const { body, rawBody } = ctx.request as { body?: unknown; rawBody?: string }
          const received: Received = { mode: delivery.mode, payload: body, rawLength: delivery.rawBody.byteLength, rawText: rawBody ?? '' }
          ctx.status = await workDone(work, received)
          ctx.body = received
        })
      })
      return { ...(await listen(app.callback())), handled: () => handled }
    },
  }
}

/** The Fastify app under test: `/hooks` in a plugin of its own behind `webhook()`, `/token` beside it. */
function fastifyApp(options: WebhookOptions, { passOn, work }: AppSettings = {}): { app: FastifyInstance; handled(): number } {
  let handled = 0
  // Passing on: Fastify's own logger (through process.stdout, where leak checks read) and its
  // default error handler, with no serializers of the app's: hookguard's routes bring their own.
  const logger = passOn === undefined ? false : { stream: { write: (line: string) => process.stdout.write(line) } }
  const app = Fastify({ logger, forceCloseConnections: true })
  if (options.auth.mode === 'oauth2') app.register(forFastify.tokenEndpoint(options), { prefix: '/token' })
  app.register(async (hooks) => {
    await hooks.register(forFastify.webhook(passOn === undefined ? options : { ...options, onError: 'throw' }))
    hooks.post('/hooks', async (request, reply) => {
      handled++
      const delivery = forFastify.requireWebhook(request)
      const received: Received = {
        mode: delivery.mode,
        payload: request.body,
        rawLength: delivery.rawBody.byteLength,
        rawText: decoder.decode(delivery.rawBody),
      }
      reply.code(await workDone(work, received))
      return received
    })
    if (passOn !== undefined) {
      hooks.setErrorHandler((error) => {
        passOn(error)
        // To the parent's handler: Fastify's default one.
        throw error
      })
    }
  })
  return { app, handled: () => handled }
}

const fastifyOnNode: AppFactory = {
  name: 'Fastify 5',
  packageName: '@hookguard/fastify',
  async start(options, settings) {
    const { app, handled } = fastifyApp(options, settings)
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as AddressInfo
    return { send: (request) => sendTo(port, request), close: () => app.close(), handled }
  },
}

/**
 * Through `app.inject()`, as Fastify apps are tested: no socket, so Node's HTTP parser never sees
 * the request. For the conformance table and the Content-Length rows only, not in `factories`:
 * the robustness catalogue's in-process rows describe a Fetch runtime, where a sender that goes
 * away mid-body leaves the answer deliverable; in inject() it takes the answer with it.
 */
export const fastifyInject: AppFactory = {
  name: 'Fastify 5 (inject)',
  packageName: '@hookguard/fastify',
  async start(options, settings) {
    const { app, handled } = fastifyApp(options, settings)
    await app.ready()
    return { send: (request) => sendToInject(app, request), close: () => app.close(), handled }
  },
}

async function sendToInject(app: FastifyInstance, { method = 'POST', path, headers = {}, body, stream }: Outgoing): Promise<Reply> {
  let pulled = 0
  // One chunk per read, so that a reader that stops early leaves the rest unsent.
  const payload =
    stream === undefined
      ? body === undefined || typeof body === 'string'
        ? body
        : Buffer.from(body)
      : new Readable({
          highWaterMark: 0,
          read() {
            const chunk = stream[pulled]
            if (chunk !== undefined) pulled++
            this.push(chunk === undefined ? null : Buffer.from(chunk))
          },
        })
  const res = await app.inject({ method: method as 'POST', url: path, headers, payload })
  const replyHeaders: Record<string, string> = {}
  for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) replyHeaders[name] = String(value)
  return {
    status: res.statusCode,
    headers: replyHeaders,
    text: res.body,
    streamedAll: stream === undefined ? undefined : pulled === stream.length,
  }
}

const honoInProcess: AppFactory = {
  name: 'Hono (app.request)',
  packageName: '@hookguard/hono',
  inProcess: true,
  async start(options, settings) {
    const { app, handled } = honoApp(options, settings)
    return { send: (request) => sendToFetch(app.request, request), close: async () => {}, handled }
  },
}

const honoOnNode: AppFactory = {
  name: 'Hono (@hono/node-server)',
  packageName: '@hookguard/hono',
  async start(options, settings) {
    const { app, handled } = honoApp(options, settings)
    return { ...(await listen(getRequestListener(app.fetch))), handled }
  },
}

const fetchInProcess: AppFactory = {
  name: 'Fetch handler (in process)',
  packageName: '@hookguard/fetch',
  inProcess: true,
  async start(options, settings) {
    const { fetch, handled } = fetchApp(options, settings)
    const request = (path: string, init: RequestInit) => fetch(new Request(new URL(path, 'http://localhost'), init))
    return { send: (outgoing) => sendToFetch(request, outgoing), close: async () => {}, handled }
  },
}

/** Served on Node through a real HTTP server, as `@hono/node-server` serves any fetch handler. */
const fetchOnNode: AppFactory = {
  name: 'Fetch handler (@hono/node-server)',
  packageName: '@hookguard/fetch',
  async start(options, settings) {
    const { fetch, handled } = fetchApp(options, settings)
    return { ...(await listen(getRequestListener(fetch))), handled }
  },
}

/**
 * Node's own `http` server with no framework, as docs/core.md writes it: the core's receiver fed
 * by `nodeRequestHeaders` and `nodeBody`, its answer written as it comes, `settleWhenAnswered` for
 * `dedupe`. With `passOn` it hands each refusal to it and answers it all the same: a plain server
 * has no error handling of its own to pass to.
 */
const nodeHttp: AppFactory = {
  name: 'node:http (nodeBody)',
  packageName: '@hookguard/core',
  async start(options, { passOn, work } = {}) {
    let handled = 0
    const receiver = createReceiver(options)
    const tokens = options.auth.mode === 'oauth2' ? createReceiver(options, { role: 'token' }) : undefined
    const answer = (res: ServerResponse, { status, headers, body }: WebhookResponse) => res.writeHead(status, headers).end(body)
    const listener = async (req: IncomingMessage, res: ServerResponse) => {
      const incoming = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: nodeRequestHeaders(req),
        body: nodeBody(req, 'Nothing else reads this body.'),
      }
      const path = incoming.url.split('?')[0]
      if (path === '/token' && tokens !== undefined) return answer(res, await tokens.token(incoming))
      if (path !== '/hooks' || incoming.method !== 'POST') return res.writeHead(404).end()
      const result = await receiver.verify(incoming)
      if (!result.ok) {
        if (result.error !== undefined) passOn?.(result.error)
        return answer(res, result.response)
      }
      handled++
      if (result.settle !== undefined) settleWhenAnswered(res, result.settle)
      const { delivery } = result
      const received: Received = {
        mode: delivery.mode,
        payload: delivery.payload,
        rawLength: delivery.rawBody.byteLength,
        rawText: decoder.decode(delivery.rawBody),
      }
      const status = await workDone(work, received).catch((error: unknown) => {
        passOn?.(error)
        return 500
      })
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(received))
    }
    // The app's own code (a secret resolver, a Basic `verify`) may throw: a 500, as a framework answers it.
    const served = (req: IncomingMessage, res: ServerResponse) =>
      void listener(req, res).catch((error: unknown) => {
        passOn?.(error)
        if (!res.headersSent) res.writeHead(500).end()
      })
    return { ...(await listen(served)), handled: () => handled }
  },
}

export const factories: readonly AppFactory[] = [
  expressFactory('Express 4', express4),
  expressFactory('Express 5', express5),
  koaFactory('Koa 2', Koa2),
  koaFactory('Koa 3', Koa3),
  fastifyOnNode,
  honoInProcess,
  honoOnNode,
  fetchInProcess,
  fetchOnNode,
  nodeHttp,
]
