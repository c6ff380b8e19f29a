import type { StandardSchemaV1, WebhookDelivery } from '@hookguard/core'
import * as adapter from '@hookguard/express'
import { type ExpressWebhookOptions, tokenEndpoint, type WebhookVariables, webhook } from '@hookguard/express'
import express, { type Request, type RequestHandler } from 'express'
import { describe, expect, expectTypeOf, it } from 'vitest'

// The type assertions are checked by `tsc`; the runtime assertions pin the export list.

interface Order {
  id: number
}

describe('@hookguard/express', () => {
  it('exports webhook, tokenEndpoint and WebhookError, nothing else at run time', () => {
    expect(Object.keys(adapter).sort()).toEqual(['WebhookError', 'tokenEndpoint', 'webhook'])
  })

  it('types req.webhook on every Express request, as set only after webhook() ran', () => {
    expectTypeOf<Request['webhook']>().toEqualTypeOf<WebhookDelivery<unknown, Buffer> | undefined>()
    express().post('/hooks', webhook({ auth: { mode: 'none' } }), (req, res) => {
      expectTypeOf(req.webhook).toEqualTypeOf<WebhookDelivery<unknown, Buffer> | undefined>()
      // A Buffer, as on every Node request: its own methods compile.
      expectTypeOf(req.webhook?.rawBody).toEqualTypeOf<Buffer | undefined>()
      req.webhook?.rawBody.toString('utf8')
      res.end()
    })
  })

  it('exports WebhookVariables for handlers that narrow the request', () => {
    expectTypeOf<WebhookVariables>().toEqualTypeOf<{ webhook: WebhookDelivery<unknown, Buffer> }>()
    expectTypeOf<(Request & WebhookVariables<Order>)['webhook']['payload']>().toEqualTypeOf<Order>()
  })

  it('returns Express request handlers, usable wherever one is', () => {
    const handler: RequestHandler = webhook({ auth: { mode: 'none' } })
    expectTypeOf(handler).toBeFunction()
    express().use('/hooks', webhook({ auth: { mode: 'none' } }))
    expectTypeOf(tokenEndpoint).returns.toEqualTypeOf<RequestHandler>()
  })

  it('types req.body in the handlers after it with the type parameter, keeping the route parameters', () => {
    express().post('/hooks/:tenant', webhook<Order>({ auth: { mode: 'none' } }), (req, res) => {
      expectTypeOf(req.body).toEqualTypeOf<Order>()
      const tenant: string = req.params.tenant
      expectTypeOf(tenant).toBeString()
      res.end()
    })
    express().post('/hooks', webhook({ auth: { mode: 'none' } }), (req, res) => {
      expectTypeOf(req.body).toBeUnknown()
      res.end()
    })
  })

  it("types req.body with a schema's output", () => {
    const schema: StandardSchemaV1<unknown, Order> = {
      '~standard': { version: 1, vendor: 'test', validate: (value) => ({ value: value as Order }) },
    }
    express().post('/hooks', webhook({ auth: { mode: 'none' }, schema }), (req, res) => {
      expectTypeOf(req.body).toEqualTypeOf<Order>()
      res.end()
    })
  })

  it("accepts onError 'respond' or 'next'", () => {
    expectTypeOf<ExpressWebhookOptions['onError']>().toEqualTypeOf<'respond' | 'next' | undefined>()
    const wrong = () =>
      webhook({
        auth: { mode: 'none' },
        // @ts-expect-error Express passes errors on with next(err); there is no 'throw'
        onError: 'throw',
      })
    expect(wrong).toThrow(TypeError)
  })
})
