import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import type { WebhookOptions } from '@hookguard/core'
import { tokenEndpoint as expressToken, webhook as expressWebhook } from '@hookguard/express'
import { tokenEndpoint as fastifyToken, webhook as fastifyWebhook, requireWebhook } from '@hookguard/fastify'
import { tokenEndpoint as fetchToken, webhook as fetchWebhook } from '@hookguard/fetch'
import { tokenEndpoint as honoToken, webhook as honoWebhook } from '@hookguard/hono'
import { tokenEndpoint as koaToken, webhook as koaWebhook } from '@hookguard/koa'
import Router from '@koa/router'
import express from 'express'
import Fastify, { type FastifyInstance } from 'fastify'
import { Hono } from 'hono'
import Koa from 'koa'

export const CREDENTIALS = {
  secret: 'whsec-demo-7c2e91',
  username: 'hook-user',
  password: 'correct horse battery staple',
  appId: 'demo-app',
  appSecret: 'demo-app-secret',
} as const

const THREE_HOURS = 3 * 60 * 60 * 1000

/** The options of each address, the same in every framework. */
const ADDRESSES: Record<string, WebhookOptions> = {
  '/secret': { auth: { mode: 'secret', secret: CREDENTIALS.secret } },
  '/basic': { auth: { mode: 'basic', username: CREDENTIALS.username, password: CREDENTIALS.password } },
  '/oauth2': { auth: { mode: 'oauth2', appId: CREDENTIALS.appId, secret: CREDENTIALS.appSecret } },
  '/none': { auth: { mode: 'none' } },
}
const OAUTH = ADDRESSES['/oauth2'] as WebhookOptions
// A token address whose clock runs three hours behind issues tokens that have already expired.
const STALE_OAUTH: WebhookOptions = { ...OAUTH, clock: () => Date.now() - THREE_HOURS }

export interface Receiver {
  framework: string
  url: string
  close(): Promise<void>
}

function expressApp(): express.Express {
  const app = express()
  for (const [path, options] of Object.entries(ADDRESSES)) {
    app.post(path, expressWebhook(options), (req, res) => {
      res.json({ received: (req.webhook?.payload as { event?: string } | undefined)?.event })
    })
  }
  app.all('/oauth2/token', expressToken(OAUTH))
  app.all('/oauth2/stale-token', expressToken(STALE_OAUTH))
  return app
}

function koaApp(): Koa {
  const router = new Router()
  for (const [path, options] of Object.entries(ADDRESSES)) {
    router.post(path, koaWebhook(options), (ctx) => {
      ctx.body = { received: (ctx.state.webhook?.payload as { event?: string } | undefined)?.event }
    })
  }
  router.all('/oauth2/token', koaToken(OAUTH))
  router.all('/oauth2/stale-token', koaToken(STALE_OAUTH))
  const app = new Koa()
  app.use(router.routes())
  return app
}

function honoApp(): Hono {
  const app = new Hono()
  for (const [path, options] of Object.entries(ADDRESSES)) {
    app.post(path, honoWebhook(options), (c) => c.json({ received: (c.get('webhook').payload as { event?: string }).event }))
  }
  app.all('/oauth2/token', honoToken(OAUTH))
  app.all('/oauth2/stale-token', honoToken(STALE_OAUTH))
  return app
}

function fastifyApp(): FastifyInstance {
  const app = Fastify({ logger: false })
  for (const [path, options] of Object.entries(ADDRESSES)) {
    // Each address in a scope of its own: webhook() reaches the routes of the scope that registers it.
    app.register(async (scope) => {
      await scope.register(fastifyWebhook(options))
      scope.post(path, async (request) => ({ received: (requireWebhook(request).payload as { event?: string }).event }))
    })
  }
  app.register(fastifyToken(OAUTH), { prefix: '/oauth2/token' })
  app.register(fastifyToken(STALE_OAUTH), { prefix: '/oauth2/stale-token' })
  return app
}

/** A plain Fetch handler, as Next.js, Bun, Deno or a Worker would call it; served by Node here. */
function fetchHandler(): (request: Request) => Promise<Response> {
  const routes = new Map<string, (request: Request) => Promise<Response>>()
  for (const [path, options] of Object.entries(ADDRESSES)) {
    routes.set(
      path,
      fetchWebhook(options, (delivery) => Response.json({ received: (delivery.payload as { event?: string }).event })),
    )
  }
  routes.set('/oauth2/token', fetchToken(OAUTH))
  routes.set('/oauth2/stale-token', fetchToken(STALE_OAUTH))
  return async (request) => routes.get(new URL(request.url).pathname)?.(request) ?? new Response(null, { status: 404 })
}

type Server = import('node:http').Server

function listening(framework: string, server: Server): Promise<Receiver> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.once('listening', () => {
      const { port } = server.address() as AddressInfo
      resolve({
        framework,
        url: `http://127.0.0.1:${port}`,
        close: () => new Promise((done) => server.close(() => done())),
      })
    })
  })
}

/** Starts one receiver per framework on loopback, each on a port the system picks. */
export function startReceivers(): Promise<Receiver[]> {
  return Promise.all([
    listening('Express', expressApp().listen(0, '127.0.0.1')),
    listening('Koa', koaApp().listen(0, '127.0.0.1')),
    listening('Hono', serve({ fetch: honoApp().fetch, port: 0, hostname: '127.0.0.1', overrideGlobalObjects: false }) as Server),
    listeningFastify(fastifyApp()),
    listening('Fetch handler', serve({ fetch: fetchHandler(), port: 0, hostname: '127.0.0.1', overrideGlobalObjects: false }) as Server),
  ])
}

async function listeningFastify(app: FastifyInstance): Promise<Receiver> {
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  return { framework: 'Fastify', url, close: () => app.close() }
}
