import { readdirSync, readFileSync } from 'node:fs'
import type { StandardSchemaV1, WebhookDelivery } from '@hookguard/core'
import * as adapter from '@hookguard/fetch'
import { type FetchWebhookOptions, tokenEndpoint, type WebhookHandler, webhook } from '@hookguard/fetch'
import { describe, expect, expectTypeOf, it } from 'vitest'

// The type assertions are checked by `tsc`; the runtime assertions pin the export list and the
// package's portability.

interface Order {
  id: number
}

/** Next.js App Router's second argument to a route handler. */
interface RouteContext {
  params: Promise<{ tenant: string }>
}

/** A Worker's bindings and execution context. */
interface Env {
  WEBHOOK_SECRET: string
}
interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void
}

const none = { auth: { mode: 'none' } } as const

describe('@hookguard/fetch', () => {
  it('exports webhook, tokenEndpoint and WebhookError, nothing else at run time', () => {
    expect(Object.keys(adapter).sort()).toEqual(['WebhookError', 'tokenEndpoint', 'webhook'])
  })

  it('uses no Node API, so that it runs on the edge, Bun, Deno and Workers unchanged', () => {
    const folder = new URL('../src/', import.meta.url)
    for (const file of readdirSync(folder)) {
      const source = readFileSync(new URL(file, folder), 'utf8')
      expect(source, file).not.toMatch(/from '(node:|fs|http|stream|buffer|crypto)|\bBuffer\b|\bprocess\./)
    }
  })

  it('types the delivery with the type parameter, its bytes a Uint8Array', () => {
    webhook<Order>(none, (delivery, request) => {
      expectTypeOf(delivery).toEqualTypeOf<WebhookDelivery<Order>>()
      expectTypeOf(delivery.payload.id).toBeNumber()
      expectTypeOf(delivery.rawBody).toEqualTypeOf<Uint8Array>()
      expectTypeOf(request).toEqualTypeOf<Request>()
      return new Response()
    })
    webhook(none, (delivery) => {
      expectTypeOf(delivery.payload).toBeUnknown()
      return new Response()
    })
  })

  it("types the delivery with a schema's output", () => {
    const schema: StandardSchemaV1<unknown, Order> = {
      '~standard': { version: 1, vendor: 'test', validate: (value) => ({ value: value as Order }) },
    }
    webhook({ ...none, schema }, (delivery) => {
      expectTypeOf(delivery.payload).toEqualTypeOf<Order>()
      return new Response()
    })
  })

  it("keeps the platform's own arguments, inferred from the handler", () => {
    const POST = webhook(none, async (_delivery, _request, { params }: RouteContext) => {
      expectTypeOf(await params).toEqualTypeOf<{ tenant: string }>()
      return new Response()
    })
    expectTypeOf(POST).toEqualTypeOf<(request: Request, context: RouteContext) => Promise<Response>>()
    // @ts-expect-error Next.js always passes the context this handler reads
    POST(new Request('http://localhost/'))

    const worker = {
      fetch: webhook(none, (_delivery, _request, env: Env, ctx: ExecutionContext) => new Response(env.WEBHOOK_SECRET && ctx && null)),
    }
    expectTypeOf(worker.fetch).parameters.toEqualTypeOf<[Request, Env, ExecutionContext]>()
  })

  it('returns a plain (request) => Promise<Response> for a handler that takes only the delivery', () => {
    const handle = webhook(none, () => new Response())
    expectTypeOf(handle).toEqualTypeOf<(request: Request) => Promise<Response>>()
    const handler: WebhookHandler<Order, []> = (delivery) => Response.json(delivery.payload)
    expectTypeOf(webhook<Order, []>(none, handler)).toEqualTypeOf<(request: Request) => Promise<Response>>()
  })

  it('requires the handler to answer with a Response', () => {
    // @ts-expect-error a handler answers; returning nothing is a mistake
    webhook(none, () => {})
  })

  it('accepts onError respond or throw, and nothing else', () => {
    expectTypeOf<FetchWebhookOptions['onError']>().toEqualTypeOf<'respond' | 'throw' | undefined>()
  })

  it('returns (request) => Promise<Response> for the token address', () => {
    expectTypeOf(tokenEndpoint).returns.toEqualTypeOf<(request: Request) => Promise<Response>>()
  })
})
