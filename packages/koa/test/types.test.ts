import type { StandardSchemaV1, WebhookDelivery } from '@hookguard/core'
import * as adapter from '@hookguard/koa'
import { type KoaWebhookOptions, tokenEndpoint, type WebhookVariables, webhook } from '@hookguard/koa'
import { bodyParser } from '@koa/bodyparser'
import Router from '@koa/router'
import Koa, { type DefaultState, type Middleware } from 'koa'
import { describe, expect, expectTypeOf, it } from 'vitest'

// The type assertions are checked by `tsc`; the runtime assertions pin the export list.

interface Order {
  id: number
}
const schema: StandardSchemaV1<unknown, Order> = {
  '~standard': { version: 1, vendor: 'test', validate: (value) => ({ value: value as Order }) },
}

describe('@hookguard/koa', () => {
  it('exports webhook, tokenEndpoint and WebhookError, nothing else at run time', () => {
    expect(Object.keys(adapter).sort()).toEqual(['WebhookError', 'tokenEndpoint', 'webhook'])
  })

  it('types ctx.state.webhook as set in the middleware after webhook(), and as optional through DefaultState elsewhere', () => {
    new Koa().use(webhook({ auth: { mode: 'none' } })).use((ctx) => {
      expectTypeOf(ctx.state.webhook.payload).toBeUnknown()
      // A Buffer, as on every Node request: its own methods compile.
      expectTypeOf(ctx.state.webhook.rawBody).toEqualTypeOf<Buffer>()
      ctx.state.webhook.rawBody.toString('utf8')
    })
    expectTypeOf<DefaultState['webhook']>().toEqualTypeOf<WebhookDelivery<unknown, Buffer> | undefined>()
    // Still plain Koa middleware, to call or store as one.
    const plain: Middleware = webhook({ auth: { mode: 'none' } })
    expect(plain).toBeTypeOf('function')
  })

  it('exports WebhookVariables for middleware typed with its state', () => {
    expectTypeOf<WebhookVariables>().toEqualTypeOf<{ webhook: WebhookDelivery<unknown, Buffer> }>()
    const handler: Middleware<WebhookVariables> = (ctx) => {
      expectTypeOf(ctx.state.webhook).toEqualTypeOf<WebhookDelivery<unknown, Buffer>>()
    }
    expect(handler).toBeTypeOf('function')
  })

  it('returns Koa middleware that adds the delivery to the state', () => {
    expectTypeOf(webhook).returns.toEqualTypeOf<Middleware & Middleware<WebhookVariables>>()
    expectTypeOf(tokenEndpoint).returns.toEqualTypeOf<Middleware>()
  })

  it('types ctx.state.webhook with the type parameter or the schema, through use() and @koa/router', () => {
    new Koa().use(webhook<Order>({ auth: { mode: 'none' } })).use((ctx) => {
      expectTypeOf(ctx.state.webhook.payload).toEqualTypeOf<Order>()
    })
    new Router().post('/hooks/:tenant', webhook({ auth: { mode: 'none' }, schema }), (ctx) => {
      expectTypeOf(ctx.state.webhook.payload).toEqualTypeOf<Order>()
    })
  })

  it('types what it sets on ctx.request: body (the payload) and rawBody (the text), as @koa/bodyparser declares them', () => {
    new Router().post('/webhooks', webhook({ auth: { mode: 'none' } }), (ctx) => {
      expectTypeOf(ctx.request.body).toBeUnknown()
      expectTypeOf(ctx.request.rawBody).toEqualTypeOf<string>()
      ctx.body = { length: ctx.request.rawBody.length }
    })
    // @koa/bodyparser's own declaration merges with it: the test file imports both.
    expect(bodyParser).toBeTypeOf('function')
  })

  it("accepts onError 'respond' or 'throw'", () => {
    expectTypeOf<KoaWebhookOptions['onError']>().toEqualTypeOf<'respond' | 'throw' | undefined>()
    const wrong = () =>
      webhook({
        auth: { mode: 'none' },
        // @ts-expect-error Koa middleware throws; there is no next(err)
        onError: 'next',
      })
    expect(wrong).toThrow(TypeError)
  })
})
