import { readdirSync, readFileSync } from 'node:fs'
import type { StandardSchemaV1, WebhookDelivery } from '@hookguard/core'
import * as adapter from '@hookguard/hono'
import { type HonoWebhookOptions, tokenEndpoint, type WebhookVariables, webhook } from '@hookguard/hono'
import { type Context, Hono } from 'hono'
import { createMiddleware } from 'hono/factory'
import { describe, expect, expectTypeOf, it } from 'vitest'

// The type assertions are checked by `tsc`; the runtime assertions pin the export list and the
// package's portability.

describe('@hookguard/hono', () => {
  it('exports webhook, tokenEndpoint and WebhookError, nothing else at run time', () => {
    expect(Object.keys(adapter).sort()).toEqual(['WebhookError', 'tokenEndpoint', 'webhook'])
  })

  it('uses no Node API, so that it runs on Bun, Deno and Workers unchanged', () => {
    const folder = new URL('../src/', import.meta.url)
    for (const file of readdirSync(folder)) {
      const source = readFileSync(new URL(file, folder), 'utf8')
      expect(source, file).not.toMatch(/from '(node:|fs|http|stream|buffer|crypto)|\bBuffer\b|\bprocess\./)
    }
  })

  it("types c.get('webhook') through the middleware's Variables", () => {
    new Hono().post('/hooks', webhook({ auth: { mode: 'none' } }), (c) => {
      expectTypeOf(c.get('webhook')).toEqualTypeOf<WebhookDelivery>()
      expectTypeOf(c.var.webhook.rawBody).toEqualTypeOf<Uint8Array>()
      return c.body(null, 204)
    })
  })

  it("types c.get('webhook').payload with the type parameter or the schema's output", () => {
    interface Order {
      id: number
    }
    const schema: StandardSchemaV1<unknown, Order> = {
      '~standard': { version: 1, vendor: 'test', validate: (value) => ({ value: value as Order }) },
    }
    new Hono().post('/hooks', webhook<Order>({ auth: { mode: 'none' } }), (c) => {
      expectTypeOf(c.get('webhook').payload).toEqualTypeOf<Order>()
      return c.body(null, 204)
    })
    new Hono().post('/hooks', webhook({ auth: { mode: 'none' }, schema }), (c) => {
      expectTypeOf(c.get('webhook').payload).toEqualTypeOf<Order>()
      return c.body(null, 204)
    })
  })

  it("does not type c.get('webhook') on a route without the middleware, where it would be undefined", () => {
    new Hono().post('/elsewhere', (c) => {
      // @ts-expect-error webhook() is not on this route, so there is no delivery to get
      c.get('webhook')
      return c.body(null, 204)
    })
  })

  it("can be called from the app's own middleware, with the app's Bindings named (Workers, per request)", () => {
    type Bindings = { WEBHOOK_SECRET: string }
    const app = new Hono<{ Bindings: Bindings }>()
    const verify = createMiddleware<{ Bindings: Bindings; Variables: WebhookVariables }>((c, next) =>
      webhook<unknown, { Bindings: Bindings }>({ auth: { mode: 'secret', secret: c.env.WEBHOOK_SECRET } })(c, next),
    )
    app.post('/webhooks', verify, (c) => {
      expectTypeOf(c.get('webhook')).toEqualTypeOf<WebhookDelivery>()
      expectTypeOf(c.env.WEBHOOK_SECRET).toEqualTypeOf<string>()
      return c.body(null, 204)
    })
    app.post('/direct', webhook({ auth: { mode: 'none' } }), (c) => {
      // The route keeps the app's own Bindings, and the delivery.
      expectTypeOf(c.env.WEBHOOK_SECRET).toEqualTypeOf<string>()
      expectTypeOf(c.get('webhook')).toEqualTypeOf<WebhookDelivery>()
      return c.body(null, 204)
    })
  })

  it('exports WebhookVariables for handlers typed on their own', () => {
    expectTypeOf<WebhookVariables>().toEqualTypeOf<{ webhook: WebhookDelivery }>()
    const handler = (c: Context<{ Variables: WebhookVariables }>) => c.get('webhook')
    expectTypeOf(handler).returns.toEqualTypeOf<WebhookDelivery>()
  })

  it('returns a handler that Hono routes accept', () => {
    const app = new Hono().all('/token', tokenEndpoint({ auth: { mode: 'oauth2', appId: 'a', secret: 's' } }))
    expectTypeOf(tokenEndpoint).returns.toEqualTypeOf<(c: Context) => Promise<Response>>()
    expect(app.routes.map((route) => route.path)).toEqual(['/token'])
  })

  it("accepts onError 'respond' or 'throw'", () => {
    expectTypeOf<HonoWebhookOptions['onError']>().toEqualTypeOf<'respond' | 'throw' | undefined>()
    const wrong = () =>
      webhook({
        auth: { mode: 'none' },
        // @ts-expect-error Hono middleware throws; there is no next(err)
        onError: 'next',
      })
    expect(wrong).toThrow(TypeError)
  })
})
