import { getRequestListener } from '@hono/node-server'
import type { WebhookOptions } from '@hookguard/core'
import * as forExpress from '@hookguard/express'
import * as forHono from '@hookguard/hono'
import * as forKoa from '@hookguard/koa'
import express5 from 'express'
import express4 from 'express4'
import { Hono } from 'hono'
import { HTTPException } from 'hono/http-exception'
import Koa3 from 'koa'
import Koa2 from 'koa2'
import { listen, sendToFetch, type Target } from './http.ts'

/**
 * What the handler after `webhook()` answers: the payload where the framework's users find it,
 * and the raw body, so a case can tell that the bytes arrived untouched.
 */
export interface Received {
  mode: string
  payload: unknown
  rawLength: number
  rawText: string
}

/** An app under test: `POST /hooks` behind `webhook(options)`, and `/token` for mode oauth2. */
export interface App extends Target {
  /** How many times the handler after `webhook()` ran. */
  handled(): number
}

export interface AppFactory {
  name: string
  start(options: WebhookOptions): Promise<App>
}

const decoder = new TextDecoder()

function expressFactory(name: string, createApp: typeof express5): AppFactory {
  return {
    name,
    async start(options) {
      let handled = 0
      const app = createApp()
      if (options.auth.mode === 'oauth2') app.all('/token', forExpress.tokenEndpoint(options))
      app.post('/hooks', forExpress.webhook(options), (req, res) => {
        handled++
        const delivery = req.webhook
        if (delivery === undefined) throw new Error('webhook() called next() without a delivery')
        const received: Received = {
          mode: delivery.mode,
          payload: req.body,
          rawLength: delivery.rawBody.byteLength,
          rawText: decoder.decode(delivery.rawBody),
        }
        res.json(received)
      })
      return { ...(await listen(app)), handled: () => handled }
    },
  }
}

function koaFactory(name: string, KoaClass: typeof Koa3): AppFactory {
  return {
    name,
    async start(options) {
      let handled = 0
      const app = new KoaClass()
      app.silent = true
      const token = options.auth.mode === 'oauth2' ? forKoa.tokenEndpoint(options) : undefined
      const hook = forKoa.webhook(options)
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
          ctx.body = received
        })
      })
      return { ...(await listen(app.callback())), handled: () => handled }
    },
  }
}

function honoApp(options: WebhookOptions): { app: Hono; handled(): number } {
  let handled = 0
  const app = new Hono()
  if (options.auth.mode === 'oauth2') app.all('/token', forHono.tokenEndpoint(options))
  app.post('/hooks', forHono.webhook(options), async (c) => {
    handled++
    const delivery = c.get('webhook')
    const received: Received = {
      mode: delivery.mode,
      payload: delivery.payload,
      rawLength: delivery.rawBody.byteLength,
      // Read again through Hono: the middleware must have left the body readable.
      rawText: await c.req.text(),
    }
    return c.json(received)
  })
  // Hono's default answer, without the console noise for the cases where a resolver throws.
  app.onError((error, c) => (error instanceof HTTPException ? error.getResponse() : c.text('Internal Server Error', 500)))
  return { app, handled: () => handled }
}

const honoInProcess: AppFactory = {
  name: 'Hono (app.request)',
  async start(options) {
    const { app, handled } = honoApp(options)
    return { send: (request) => sendToFetch(app.request, request), close: async () => {}, handled }
  },
}

const honoOnNode: AppFactory = {
  name: 'Hono (@hono/node-server)',
  async start(options) {
    const { app, handled } = honoApp(options)
    return { ...(await listen(getRequestListener(app.fetch))), handled }
  },
}

export const factories: readonly AppFactory[] = [
  expressFactory('Express 4', express4),
  expressFactory('Express 5', express5),
  koaFactory('Koa 2', Koa2),
  koaFactory('Koa 3', Koa3),
  honoInProcess,
  honoOnNode,
]
