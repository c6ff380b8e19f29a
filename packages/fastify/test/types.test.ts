import type { WebhookDelivery } from '@hookguard/core'
import * as adapter from '@hookguard/fastify'
import { type FastifyWebhookDelivery, type FastifyWebhookOptions, tokenEndpoint, type WebhookVariables, webhook } from '@hookguard/fastify'
import Fastify, { type FastifyPluginAsync, type FastifyRequest } from 'fastify'
import { describe, expect, expectTypeOf, it } from 'vitest'

// The type assertions are checked by `tsc`; the runtime assertions pin the export list.

interface Order {
  id: number
  tenant: string
}

describe('@hookguard/fastify', () => {
  it('exports webhook, tokenEndpoint, logSerializers and WebhookError, nothing else at run time', () => {
    expect(Object.keys(adapter).sort()).toEqual(['WebhookError', 'logSerializers', 'tokenEndpoint', 'webhook'])
  })

  it('types request.webhook on every Fastify request, its payload unknown by default', () => {
    expectTypeOf<FastifyRequest['webhook']>().toEqualTypeOf<WebhookDelivery<unknown, Buffer>>()
    const app = Fastify()
    app.register(async (hooks) => {
      await hooks.register(webhook({ auth: { mode: 'none' } }))
      hooks.post('/hooks', async (request) => {
        expectTypeOf(request.webhook.payload).toEqualTypeOf<unknown>()
        // A Buffer, as on every Node request: its own methods compile.
        expectTypeOf(request.webhook.rawBody).toEqualTypeOf<Buffer>()
        return request.webhook.rawBody.toString('utf8')
      })
    })
  })

  it("types the payload as the route's Body, as request.body is", () => {
    Fastify().post<{ Body: Order }>('/hooks', async (request) => {
      expectTypeOf(request.webhook.payload).toEqualTypeOf<Order>()
      expectTypeOf(request.webhook).toEqualTypeOf<FastifyWebhookDelivery<Order>>()
      expectTypeOf(request.body).toEqualTypeOf<Order>()
    })
  })

  it('exports WebhookVariables for code that takes a request after webhook()', () => {
    expectTypeOf<WebhookVariables<Order>>().toEqualTypeOf<{ webhook: WebhookDelivery<Order, Buffer> }>()
  })

  it('returns Fastify plugins', () => {
    expectTypeOf(webhook).returns.toEqualTypeOf<FastifyPluginAsync>()
    expectTypeOf(tokenEndpoint).returns.toEqualTypeOf<FastifyPluginAsync>()
  })

  it("accepts onError 'respond' or 'throw'", () => {
    expectTypeOf<FastifyWebhookOptions['onError']>().toEqualTypeOf<'respond' | 'throw' | undefined>()
    const wrong = () =>
      webhook({
        auth: { mode: 'none' },
        // @ts-expect-error Fastify takes errors thrown from hooks; there is no 'next'
        onError: 'next',
      })
    expect(wrong).toThrow(TypeError)
  })
})
