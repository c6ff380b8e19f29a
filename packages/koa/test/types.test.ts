import type { WebhookDelivery } from '@hookguard/core'
import * as adapter from '@hookguard/koa'
import { type KoaWebhookOptions, tokenEndpoint, type WebhookVariables, webhook } from '@hookguard/koa'
import Koa, { type Middleware } from 'koa'
import { describe, expect, expectTypeOf, it } from 'vitest'

// The type assertions are checked by `tsc`; the runtime assertions pin the export list.

describe('@hookguard/koa', () => {
  it('exports webhook, tokenEndpoint and WebhookError, nothing else at run time', () => {
    expect(Object.keys(adapter).sort()).toEqual(['WebhookError', 'tokenEndpoint', 'webhook'])
  })

  it('types ctx.state.webhook through DefaultState, as set only after webhook() ran', () => {
    new Koa().use(webhook({ auth: { mode: 'none' } })).use((ctx) => {
      expectTypeOf(ctx.state.webhook).toEqualTypeOf<WebhookDelivery<unknown, Buffer> | undefined>()
      // A Buffer, as on every Node request: its own methods compile.
      expectTypeOf(ctx.state.webhook?.rawBody).toEqualTypeOf<Buffer | undefined>()
      ctx.state.webhook?.rawBody.toString('utf8')
    })
  })

  it('exports WebhookVariables for middleware typed with its state', () => {
    expectTypeOf<WebhookVariables>().toEqualTypeOf<{ webhook: WebhookDelivery<unknown, Buffer> }>()
    const handler: Middleware<WebhookVariables> = (ctx) => {
      expectTypeOf(ctx.state.webhook).toEqualTypeOf<WebhookDelivery<unknown, Buffer>>()
    }
    expect(handler).toBeTypeOf('function')
  })

  it('returns Koa middleware', () => {
    expectTypeOf(webhook).returns.toEqualTypeOf<Middleware>()
    expectTypeOf(tokenEndpoint).returns.toEqualTypeOf<Middleware>()
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
