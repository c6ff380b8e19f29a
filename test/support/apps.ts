import { getRequestListener } from '@hono/node-server'
import type { WebhookOptions } from '@hookguard/core'
import * as forExpress from '@hookguard/express'
import * as forKoa from '@hookguard/koa'
import { listen, sendToFetch, type Target } from '@hookguard/testkit/http'
import express5, { type ErrorRequestHandler } from 'express'
import express4 from 'express4'
import Koa3 from 'koa'
import Koa2 from 'koa2'
import { honoApp } from './hono-app.ts'

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

/**
 * How a refusal is answered. By default hookguard answers it itself (onError 'respond') and the
 * framework stays quiet. With `passOn`, every refusal goes to the framework's own error handling
 * instead (Express onError 'next', Koa and Hono 'throw'), left as it ships, logging included, so
 * that leak checks see what a real app would print; `passOn` sees each error that reaches it.
 */
export interface AppSettings {
  passOn?: (error: unknown) => void
}

export interface AppFactory {
  name: string
  /** The package the app's middleware comes from: setup mistakes are reported under its name. */
  packageName: string
  start(options: WebhookOptions, settings?: AppSettings): Promise<App>
}

const decoder = new TextDecoder()

function expressFactory(name: string, createApp: typeof express5): AppFactory {
  return {
    name,
    packageName: '@hookguard/express',
    async start(options, { passOn } = {}) {
      let handled = 0
      const app = createApp()
      // Not 'test' (vitest's NODE_ENV): the final handler then logs every error with its stack,
      // and puts the stack in the answer, as in a developer's app.
      if (passOn !== undefined) app.set('env', 'development')
      if (options.auth.mode === 'oauth2') app.all('/token', forExpress.tokenEndpoint(options))
      const hook = forExpress.webhook(passOn === undefined ? options : { ...options, onError: 'next' })
      app.post('/hooks', hook, (req, res) => {
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
    async start(options, { passOn } = {}) {
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
          ctx.body = received
        })
      })
      return { ...(await listen(app.callback())), handled: () => handled }
    },
  }
}

const honoInProcess: AppFactory = {
  name: 'Hono (app.request)',
  packageName: '@hookguard/hono',
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

export const factories: readonly AppFactory[] = [
  expressFactory('Express 4', express4),
  expressFactory('Express 5', express5),
  koaFactory('Koa 2', Koa2),
  koaFactory('Koa 3', Koa3),
  honoInProcess,
  honoOnNode,
]
