import {
  createReceiver,
  type IncomingRequest,
  nodeRequestHeaders,
  rawBodyUnavailable,
  type WebhookDelivery,
  type WebhookOptions,
  type WebhookResponse,
} from '@hookguard/core'
import type { Context, Middleware } from 'koa'
import getRawBody from 'raw-body'

const HOW_TO_MOUNT =
  'Mount webhook() before your body parser, or use one that keeps the raw text in ctx.request.rawBody (koa-bodyparser, @koa/bodyparser).'

export type KoaWebhookOptions = WebhookOptions & {
  /** `'respond'` answers a refused request itself; `'throw'` throws the `WebhookError` for Koa's error handling. */
  onError?: 'respond' | 'throw'
}

/** A verified delivery in Koa: the bytes received are a `Buffer`. */
export type KoaWebhookDelivery = WebhookDelivery<unknown, Buffer>

/** What `webhook()` adds to `ctx.state`. */
export interface WebhookVariables {
  webhook: KoaWebhookDelivery
}

// `ctx.request.body` and `rawBody` are left to the body parser's own types: @koa/bodyparser and
// @types/koa-bodyparser declare them differently, and a third declaration would break one of them.
declare module 'koa' {
  interface DefaultState {
    /** The verified delivery, set by `webhook()` before the next middleware runs. */
    webhook?: KoaWebhookDelivery
  }
}

/** The fields body parsers put on `ctx.request`, which `webhook()` reads and sets. */
type ParsedRequest = { body?: unknown; rawBody?: unknown }

/**
 * Koa 2 and 3 middleware for the message receiving address. On success `ctx.state.webhook` holds
 * `{ mode, payload, rawBody }`, `ctx.request.body` the payload and `ctx.request.rawBody` the body
 * as a string, and the next middleware runs; on failure the request is answered (or thrown, see
 * `onError`) and the next middleware never runs.
 *
 * Options (besides `onError`, those of `@hookguard/core`):
 * - `auth`: `{ mode: 'secret', secret }` (a string, several for rotation, or a function of the
 *   request), `{ mode: 'basic', username, password }` or `{ mode: 'basic', verify }`,
 *   `{ mode: 'oauth2', appId, secret }`, or `{ mode: 'none' }`. Required.
 * - `maxBodySize`: largest body in bytes; default 1 MiB.
 * - `maxDepth`: deepest JSON nesting; default 1000.
 * - `signatureHeader`: default `'X-Service-Hmac-Signature'`.
 * - `onError`: `'respond'` (default) writes the JSON error answer; `'throw'` throws the
 *   `WebhookError` (`status`, `expose` and `headers` follow http-errors, so Koa answers it).
 *
 * Mount it before a body parser, or after one that keeps `ctx.request.rawBody`
 * (koa-bodyparser, @koa/bodyparser).
 *
 * @example
 * const auth = { mode: 'secret', secret: process.env.WEBHOOK_SECRET } as const
 * router.post('/hooks', webhook({ auth }), (ctx) => {
 *   console.log(ctx.state.webhook?.payload)
 *   ctx.status = 204
 * })
 */
export function webhook(options: KoaWebhookOptions): Middleware {
  const receiver = createReceiver(options, { packageName: '@hookguard/koa' })
  const onError = checkOnError(options.onError)

  return async function webhookMiddleware(ctx, next) {
    const result = await receiver.verify(toIncomingRequest(ctx))
    if (!result.ok) {
      if (onError === 'throw') throw result.error
      send(ctx, result.response)
      return
    }
    // The core hands back the bytes the body source gave it, and bodyOf gives only Buffers.
    const delivery = result.delivery as KoaWebhookDelivery
    ctx.state.webhook = delivery
    const request = ctx.request as ParsedRequest
    request.body = delivery.payload
    request.rawBody = textOf(delivery.rawBody)
    await next()
  }
}

/**
 * Middleware for the token acquisition address (mode `oauth2`): answers the service's
 * `GET ?appid=…&secret=…&grant_type=client_credentials`, or the same fields as a form POST.
 * Throws a `TypeError` at setup for any other mode.
 *
 * @example
 * const auth = { mode: 'oauth2', appId: 'my-app', secret: process.env.WEBHOOK_SECRET } as const
 * router.all('/token', tokenEndpoint({ auth }))
 */
export function tokenEndpoint(options: KoaWebhookOptions): Middleware {
  const receiver = createReceiver(options, { role: 'token', packageName: '@hookguard/koa' })
  return async function tokenHandler(ctx) {
    send(ctx, await receiver.token(toIncomingRequest(ctx)))
  }
}

/** The body as text, as the body parsers keep it; Buffer's decoder is the fast one on Node. */
function textOf(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')
}

function checkOnError(onError: unknown): 'respond' | 'throw' {
  if (onError === undefined) return 'respond'
  if (onError === 'respond' || onError === 'throw') return onError
  throw new TypeError("@hookguard/koa: onError must be 'respond' or 'throw'")
}

function toIncomingRequest(ctx: Context): IncomingRequest {
  // originalUrl keeps the prefix that koa-mount and routers strip from ctx.url.
  // ctx.protocol and ctx.host honour app.proxy (X-Forwarded-Proto, X-Forwarded-Host). Not
  // ctx.origin: Koa 3 made that the Origin request header.
  const origin = ctx.host ? `${ctx.protocol}://${ctx.host}` : undefined
  return { method: ctx.method, url: ctx.originalUrl, origin, headers: nodeRequestHeaders(ctx.req), body: bodyOf(ctx) }
}

function bodyOf(ctx: Context): IncomingRequest['body'] {
  // The bodyparsers decode as UTF-8, so encoding their text back gives the bytes received.
  const { rawBody } = ctx.request as ParsedRequest
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8')
  const { req } = ctx
  return (limit) => {
    // A parser that found nothing to parse sets ctx.request.body yet leaves the stream unread,
    // so the stream itself says whether the bytes are gone.
    if (req.readableEnded || req.readableDidRead) throw rawBodyUnavailable(HOW_TO_MOUNT)
    return getRawBody(req, { limit, length: req.headers['content-length'] })
  }
}

function send(ctx: Context, { status, headers, body }: WebhookResponse): void {
  ctx.status = status
  ctx.set(headers)
  // Set after the headers, so Koa keeps the JSON content type instead of guessing text/plain.
  ctx.body = body
}

export type { WebhookAuth, WebhookDelivery, WebhookErrorCode, WebhookMode, WebhookOptions, WebhookRequest } from '@hookguard/core'
export { WebhookError } from '@hookguard/core'
