import type { WebhookDelivery } from '@hookguard/core'
import * as adapter from '@hookguard/fastify'
import {
  type FastifyWebhookDelivery,
  type FastifyWebhookOptions,
  frameworkErrors,
  type LoggedRequest,
  logSerializers,
  notFoundHandler,
  requireWebhook,
  tokenEndpoint,
  type WebhookVariables,
  webhook,
} from '@hookguard/fastify'
import Fastify, { type FastifyLoggerOptions, type FastifyPluginAsync, type FastifyRequest } from 'fastify'
import { describe, expect, expectTypeOf, it } from 'vitest'

// The type assertions are checked by `tsc`; the runtime assertions pin the export list.

interface Order {
  id: number
  tenant: string
}

describe('@hookguard/fastify', () => {
  it('exports webhook, tokenEndpoint, requireWebhook, logSerializers, notFoundHandler, frameworkErrors and WebhookError, nothing else at run time', () => {
    expect(Object.keys(adapter).sort()).toEqual([
      'WebhookError',
      'frameworkErrors',
      'logSerializers',
      'notFoundHandler',
      'requireWebhook',
      'tokenEndpoint',
      'webhook',
    ])
  })

  it('types logSerializers.req as Fastify declares its logger: optional fields absent, never undefined (exactOptionalPropertyTypes)', () => {
    expectTypeOf(logSerializers.req).returns.toEqualTypeOf<LoggedRequest>()
    expectTypeOf<LoggedRequest>().toEqualTypeOf<{
      method: string
      url: string
      version?: string
      host: string
      remoteAddress: string
      remotePort?: number
    }>()
    const serializers: FastifyLoggerOptions['serializers'] = logSerializers
    expect(serializers).toBe(logSerializers)
    const request = { method: 'POST', url: '/webhooks', headers: {}, host: 'localhost', ip: '127.0.0.1', socket: {} }
    expect(logSerializers.req(request as unknown as FastifyRequest)).toStrictEqual({
      method: 'POST',
      url: '/webhooks',
      host: 'localhost',
      remoteAddress: '127.0.0.1',
    })
  })

  it('types request.webhook on every Fastify request as possibly absent: a route outside the scope has none', () => {
    expectTypeOf<FastifyRequest['webhook']>().toEqualTypeOf<WebhookDelivery<unknown, Buffer> | null | undefined>()
    const app = Fastify()
    app.post('/elsewhere', async (request) => {
      // @ts-expect-error request.webhook is absent on a route webhook() does not cover
      return request.webhook.payload
    })
    app.register(async (hooks) => {
      await hooks.register(webhook({ auth: { mode: 'none' } }))
      hooks.post('/hooks', async (request) => {
        const delivery = requireWebhook(request)
        expectTypeOf(delivery.payload).toEqualTypeOf<unknown>()
        // A Buffer, as on every Node request: its own methods compile.
        expectTypeOf(delivery.rawBody).toEqualTypeOf<Buffer>()
        return delivery.rawBody.toString('utf8')
      })
    })
  })

  it("types the payload as the route's Body, as request.body is", () => {
    Fastify().post<{ Body: Order }>('/hooks', async (request) => {
      expectTypeOf(request.webhook).toEqualTypeOf<FastifyWebhookDelivery<Order> | null | undefined>()
      expectTypeOf(requireWebhook(request)).toEqualTypeOf<FastifyWebhookDelivery<Order>>()
      expectTypeOf(requireWebhook(request).payload).toEqualTypeOf<Order>()
      expectTypeOf(request.body).toEqualTypeOf<Order>()
    })
  })

  it('takes notFoundHandler where Fastify takes a not-found handler', () => {
    Fastify().setNotFoundHandler(notFoundHandler)
    expectTypeOf(notFoundHandler).parameter(0).toEqualTypeOf<FastifyRequest>()
  })

  it('takes frameworkErrors where Fastify takes the server option, beside the logger', () => {
    Fastify({ frameworkErrors, logger: { serializers: logSerializers } })
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
