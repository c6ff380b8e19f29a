import { createReceiver, type WebhookDelivery, type WebhookOptions } from '@hookguard/core'
import { checkOnError, type IncomingRequest, type WebhookResponse } from '@hookguard/core/adapter'
import { nodeBody, nodeRequestHeaders, settleWhenAnswered } from '@hookguard/core/node'
import type { Context, Middleware } from 'koa'

const PACKAGE = '@hookguard/koa'
const HOW_TO_MOUNT =
  'Mount webhook() before your body parser, or use one that keeps the raw text in ctx.request.rawBody (koa-bodyparser, @koa/bodyparser).'

/** The core's options, and how a refusal is answered. */
export type KoaWebhookOptions<Payload = unknown> = WebhookOptions<Payload> & {
  /** `'respond'` (default) answers a refusal itself; `'throw'` throws the `WebhookError` for Koa's error handling. */
  onError?: 'respond' | 'throw'
}

/** A verified delivery in Koa: the bytes received are a `Buffer`. */
export type KoaWebhookDelivery<Payload = unknown> = WebhookDelivery<Payload, Buffer>

/** What `webhook()` adds to `ctx.state`: Koa's `use()` and @koa/router carry it to the middleware after it. */
export interface WebhookVariables<Payload = unknown> {
  webhook: KoaWebhookDelivery<Payload>
}

declare module 'koa' {
  interface DefaultState {
    /** The verified delivery, set by `webhook()` before the next middleware runs. */
    webhook?: KoaWebhookDelivery
  }
  // What webhook() sets on the request, declared word for word as @koa/bodyparser and
  // @types/koa-bodyparser 4 declare it: identical declarations merge, any other one is a conflict
  // (TS2717) for an app that has both. rawBody is a string on a webhook route (and behind those
  // parsers), as they declare it.
  interface Request {
    /** The parsed body: on a webhook route, the delivery's payload. */
    body?: unknown
    /** The body as text (UTF-8): on a webhook route, the body received. */
    rawBody: string
  }
}

/** The fields as they may really be before `webhook()` runs: a parser may have set them, or not. */
type ParsedRequest = { body?: unknown; rawBody?: unknown }

/**
 * Koa 2 and 3 middleware for the message receiving address (options: `WebhookOptions`). On
 * success `ctx.state.webhook` holds `{ mode, payload, rawBody }`, `ctx.request.body` the payload
 * and `ctx.request.rawBody` the body as text, and the next middleware runs; on failure the
 * request is answered (or thrown) and it never runs. Mount it before a body parser, or after one
 * that keeps `ctx.request.rawBody` (koa-bodyparser, @koa/bodyparser).
 *
 * @example
 * router.post('/webhooks', webhook({ auth: { mode: 'secret', secret: process.env.WEBHOOK_SECRET! } }), (ctx) => {
 *   console.log(ctx.state.webhook?.payload)
 *   ctx.status = 204
 * })
 */
export function webhook<Payload = unknown>(options: KoaWebhookOptions<Payload>): Middleware & Middleware<WebhookVariables<Payload>> {
  const receiver = createReceiver(options, { packageName: PACKAGE })
  const onError = checkOnError(PACKAGE, options.onError, 'throw')

  return async function webhookMiddleware(ctx, next) {
    const result = await receiver.verify(toIncomingRequest(ctx))
    if (!result.ok) {
      if (onError === 'throw' && result.error) throw result.error
      return send(ctx, result.response)
    }
    // The core hands back the bytes the body source gave it, and bodyOf gives only Buffers.
    const delivery = result.delivery as KoaWebhookDelivery<Payload>
    ctx.state.webhook = delivery
    const request = ctx.request as ParsedRequest
    request.body = delivery.payload
    // The core decoded a JSON body to parse it: its text, rather than a second decoding of the bytes.
    request.rawBody = result.text ?? delivery.rawBody.toString('utf8')
    // Koa answers once every middleware has returned, errors included: judged by what it sends.
    if (result.settle === undefined) return next()
    const outcome = settleWhenAnswered(ctx.res, result.settle)
    // Koa writes nothing to a connection the sender closed, so there its verdict is the handler's.
    let handled = false
    try {
      await next()
      handled = ctx.status < 400
    } finally {
      outcome(handled)
    }
  }
}

/**
 * Middleware for the token acquisition address (mode `oauth2`); mount it for every method, since
 * OAuth clients POST. Throws a `TypeError` at setup for any other mode.
 *
 * @example
 * const auth = { mode: 'oauth2', appId: 'my-app', secret: process.env.APP_SECRET! } as const
 * router.all('/webhooks/token', tokenEndpoint({ auth }))
 */
export function tokenEndpoint(options: KoaWebhookOptions): Middleware {
  const receiver = createReceiver(options, { role: 'token', packageName: PACKAGE })
  return async function tokenHandler(ctx) {
    send(ctx, await receiver.token(toIncomingRequest(ctx)))
  }
}

function toIncomingRequest(ctx: Context): IncomingRequest {
  // originalUrl keeps the prefix that koa-mount and routers strip; ctx.protocol and ctx.host honour
  // app.proxy (not ctx.origin: Koa 3 made that the Origin request header). The method from
  // ctx.request, whose getter reads the same field as ctx.method's: Koa's context delegates each name
  // through one shared getter, which V8 reads by a megamorphic look-up on every call.
  const origin = () => (ctx.host ? `${ctx.protocol}://${ctx.host}` : undefined)
  return { method: ctx.request.method, url: ctx.originalUrl, origin, headers: nodeRequestHeaders(ctx.req), body: bodyOf(ctx) }
}

function bodyOf(ctx: Context): IncomingRequest['body'] {
  // The body parsers decode as UTF-8, so encoding their text back gives the bytes received.
  const { rawBody } = ctx.request as ParsedRequest
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8')
  return nodeBody(ctx.req, HOW_TO_MOUNT)
}

function send(ctx: Context, { status, headers, body }: WebhookResponse): void {
  ctx.status = status
  ctx.set(headers)
  // Set after the headers, so Koa keeps the JSON content type instead of guessing text/plain.
  ctx.body = body
}

export type { WebhookAuth, WebhookDelivery, WebhookErrorCode, WebhookEvent, WebhookOptions, WebhookRequest } from '@hookguard/core'
export { WebhookError } from '@hookguard/core'
