import { getRequestListener } from '@hono/node-server'
import type { WebhookOptions } from '@hookguard/core'
import * as forExpress from '@hookguard/express'
import * as forHono from '@hookguard/hono'
import * as forKoa from '@hookguard/koa'
import express5, { type ErrorRequestHandler } from 'express'
import express4 from 'express4'
import { Hono } from 'hono'
import Koa3 from 'koa'
import Koa2 from 'koa2'
import type { Received } from '../../support/apps.ts'
import { listen, sendToFetch, type Target } from '../../support/http.ts'
import { observePort, type Served } from './listening.ts'

/**
 * The same apps as the shared factories (`POST /hooks` behind `webhook()`, `/token` for oauth2, a
 * handler that echoes what it received), but with `onError: 'next'` (Express) or `'throw'` (Koa,
 * Hono): a refusal goes to the framework's own error handling, which is left as it ships, logging
 * included. Each app records the errors that reached it.
 */
export interface PassingApp extends Served {
  /** The errors the framework's error handling received, in order. */
  passedOn(): unknown[]
}

export interface PassingFactory {
  name: string
  start(options: WebhookOptions): Promise<PassingApp>
}

const decoder = new TextDecoder()

function expressFactory(name: string, createApp: typeof express5): PassingFactory {
  return {
    name,
    async start(options) {
      let handled = 0
      const passedOn: unknown[] = []
      const app = createApp()
      // Not 'test' (vitest's NODE_ENV): the final handler then logs every error with its stack,
      // and puts the stack in the answer, as in a developer's app.
      app.set('env', 'development')
      if (options.auth.mode === 'oauth2') app.all('/token', forExpress.tokenEndpoint(options))
      app.post('/hooks', forExpress.webhook({ ...options, onError: 'next' }), (req, res) => {
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
      const record: ErrorRequestHandler = (error, _req, _res, next) => {
        passedOn.push(error)
        next(error)
      }
      app.use(record)
      return served(() => listen(app), { handled: () => handled, passedOn: () => passedOn })
    },
  }
}

function koaFactory(name: string, KoaClass: typeof Koa3): PassingFactory {
  return {
    name,
    async start(options) {
      let handled = 0
      const passedOn: unknown[] = []
      const app = new KoaClass()
      // Koa's default app.onerror logs to stderr unless silent; nothing it logs may be sensitive.
      app.silent = false
      const token = options.auth.mode === 'oauth2' ? forKoa.tokenEndpoint(options) : undefined
      const hook = forKoa.webhook({ ...options, onError: 'throw' })
      app.use(async (_ctx, next) => {
        try {
          await next()
        } catch (error) {
          passedOn.push(error)
          throw error
        }
      })
      app.use(async (ctx, next) => {
        if (ctx.path === '/token' && token !== undefined) return token(ctx, next)
        if (ctx.path !== '/hooks' || ctx.method !== 'POST') return next()
        return hook(ctx, async () => {
          handled++
          const delivery = ctx.state.webhook
          if (delivery === undefined) throw new Error('webhook() called next() without a delivery')
          const { body, rawBody } = ctx.request as { body?: unknown; rawBody?: string }
          const received: Received = { mode: delivery.mode, payload: body, rawLength: delivery.rawBody.byteLength, rawText: rawBody ?? '' }
          ctx.body = received
        })
      })
      return served(() => listen(app.callback()), { handled: () => handled, passedOn: () => passedOn })
    },
  }
}

function honoApp(options: WebhookOptions): { app: Hono; handled(): number; passedOn(): unknown[] } {
  let handled = 0
  const passedOn: unknown[] = []
  const app = new Hono()
  if (options.auth.mode === 'oauth2') app.all('/token', forHono.tokenEndpoint(options))
  app.post('/hooks', forHono.webhook({ ...options, onError: 'throw' }), async (c) => {
    handled++
    const delivery = c.get('webhook')
    const received: Received = {
      mode: delivery.mode,
      payload: delivery.payload,
      rawLength: delivery.rawBody.byteLength,
      rawText: await c.req.text(),
    }
    return c.json(received)
  })
  app.onError((error, c) => {
    passedOn.push(error)
    // Hono's own default handler, logging included.
    if ('getResponse' in error && typeof error.getResponse === 'function') return error.getResponse() as Response
    console.error(error)
    return c.text('Internal Server Error', 500)
  })
  return { app, handled: () => handled, passedOn: () => passedOn }
}

async function served(listening: () => Promise<Target>, extra: { handled(): number; passedOn(): unknown[] }): Promise<PassingApp> {
  const { value: target, port } = await observePort(listening)
  return { ...target, ...extra, port }
}

export const passingFactories: readonly PassingFactory[] = [
  expressFactory('Express 4', express4),
  expressFactory('Express 5', express5),
  koaFactory('Koa 2', Koa2),
  koaFactory('Koa 3', Koa3),
  {
    name: 'Hono (app.request)',
    async start(options) {
      const { app, handled, passedOn } = honoApp(options)
      return { send: (request) => sendToFetch(app.request, request), close: async () => {}, handled, passedOn, port: undefined }
    },
  },
  {
    name: 'Hono (@hono/node-server)',
    async start(options) {
      const { app, handled, passedOn } = honoApp(options)
      return served(() => listen(getRequestListener(app.fetch)), { handled, passedOn })
    },
  },
]
