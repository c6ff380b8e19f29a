import { createReceiver, type VerifyResult, type WebhookDelivery, type WebhookOptions } from '@hookguard/core'
import { checkOnError, type IncomingRequest, type WebhookResponse } from '@hookguard/core/adapter'
import { nodeBody, nodeRequestHeaders, settleWhenAnswered } from '@hookguard/core/node'
import type { Request, RequestHandler, Response } from 'express'

const PACKAGE = '@hookguard/express'
const HOW_TO_MOUNT =
  'Mount webhook() before express.json() and other body parsers, or keep a raw copy with their verify option: express.json({ verify: (req, _res, buf) => { req.rawBody = buf } }).'

/** The core's options, and how a refusal is answered. */
export type ExpressWebhookOptions<Payload = unknown> = WebhookOptions<Payload> & {
  /** `'respond'` (default) answers a refusal itself; `'next'` hands the `WebhookError` to `next(err)`. */
  onError?: 'respond' | 'next'
}

/** A verified delivery in Express: the bytes received are a `Buffer`. */
export type ExpressWebhookDelivery<Payload = unknown> = WebhookDelivery<Payload, Buffer>

/**
 * The middleware `webhook()` returns: `req.body` is `Payload` in the handlers after it. Its route
 * parameters are `any` because Express infers one parameter type for a route from all its handlers:
 * anything narrower here would override the `{ tenant: string }` it reads from `/hooks/:tenant`.
 */
// biome-ignore lint/suspicious/noExplicitAny: see above; `any` is what leaves the route's own inference in charge
export type WebhookMiddleware<Payload = unknown> = RequestHandler<any, unknown, Payload>

/** `req.webhook` with its payload typed, for code handed the request after `webhook()` ran: `(req as Request & WebhookVariables<Order>).webhook`. */
export interface WebhookVariables<Payload = unknown> {
  webhook: ExpressWebhookDelivery<Payload>
}

declare global {
  namespace Express {
    interface Request {
      /** The verified delivery, set by `webhook()` before the next handler runs. */
      webhook?: ExpressWebhookDelivery
    }
  }
}

/**
 * Express 4 and 5 middleware for the message receiving address (options: `WebhookOptions`). On
 * success `req.webhook` holds `{ mode, payload, rawBody }`, `req.body` the payload, and the next
 * handler runs; on failure the request is answered (or passed to `next(err)`) and it never runs.
 * Mount it before `express.json()`; a raw copy in `req.rawBody`, or an `express.raw()` or
 * `express.text()` body, is used as it is.
 *
 * @example
 * app.post('/webhooks', webhook({ auth: { mode: 'secret', secret: process.env.WEBHOOK_SECRET! } }), (req, res) => {
 *   console.log(req.webhook?.payload)
 *   res.sendStatus(204)
 * })
 */
export function webhook<Payload = unknown>(options: ExpressWebhookOptions<Payload>): WebhookMiddleware<Payload> {
  const receiver = createReceiver(options, { packageName: PACKAGE })
  const onError = checkOnError(PACKAGE, options.onError, 'next')

  const middleware: RequestHandler = async function webhookMiddleware(req, res, next) {
    let result: VerifyResult<Payload>
    try {
      result = await receiver.verify(toIncomingRequest(req))
    } catch (error) {
      // Only the application's own resolver or Basic `verify` throws; Express 4 would ignore a
      // rejected promise, so its error goes to the app's error handling.
      next(error)
      return
    }
    if (result.ok) {
      // The core hands back the bytes the body source gave it, and bodyOf gives only Buffers.
      req.webhook = result.delivery as ExpressWebhookDelivery
      req.body = result.delivery.payload
      if (result.settle) settleWhenAnswered(res, result.settle)
      next()
    } else if (onError === 'next' && result.error) next(result.error)
    else send(res, result.response)
  }
  // Only the type narrows: the request the handlers after it see has `Payload` as its body.
  return middleware as WebhookMiddleware<Payload>
}

/**
 * Handler for the token acquisition address (mode `oauth2`); mount it for every method, since
 * OAuth clients POST. Throws a `TypeError` at setup for any other mode.
 *
 * @example
 * const auth = { mode: 'oauth2', appId: 'my-app', secret: process.env.APP_SECRET! } as const
 * app.all('/webhooks/token', tokenEndpoint({ auth }))
 */
export function tokenEndpoint(options: ExpressWebhookOptions): RequestHandler {
  const receiver = createReceiver(options, { role: 'token', packageName: PACKAGE })
  return function tokenHandler(req, res, next) {
    receiver
      .token(toIncomingRequest(req))
      .then((answer) => send(res, answer))
      .catch(next)
  }
}

function toIncomingRequest(req: Request): IncomingRequest {
  // originalUrl keeps the mount path and the query that a router strips from req.url.
  return { method: req.method, url: req.originalUrl, origin: () => originOf(req), headers: nodeRequestHeaders(req), body: bodyOf(req) }
}

/**
 * The origin the request was sent to, as Express 5's `req.host` reads it (Express 4 has no getter
 * that keeps the port): X-Forwarded-Host only when `trust proxy` trusts the peer, as `req.protocol`.
 */
function originOf(req: Request): string | undefined {
  const trust = req.app.get('trust proxy fn') as ((address: string | undefined, hop: number) => boolean) | undefined
  const forwarded = trust?.(req.socket.remoteAddress, 0) === true ? req.get('x-forwarded-host')?.split(',')[0]?.trim() : undefined
  const host = forwarded || req.get('host')
  return host ? `${req.protocol}://${host}` : undefined
}

/**
 * The bytes a parser kept (`req.rawBody` from a body-parser `verify` hook or a platform such as
 * Cloud Functions, or an `express.raw()` / `express.text()` body), else the stream read here.
 */
function bodyOf(req: Request): IncomingRequest['body'] {
  const { rawBody } = req as { rawBody?: unknown }
  for (const kept of [rawBody, req.body as unknown]) {
    if (Buffer.isBuffer(kept)) return kept
    // A view of the same memory, not a copy: the delivery's rawBody is a Buffer on Node.
    if (kept instanceof Uint8Array) return Buffer.from(kept.buffer, kept.byteOffset, kept.byteLength)
    if (typeof kept === 'string') return Buffer.from(kept, 'utf8')
  }
  return nodeBody(req, HOW_TO_MOUNT)
}

function send(res: Response, { status, headers, body }: WebhookResponse): void {
  res.writeHead(status, headers).end(body)
}

export type { WebhookAuth, WebhookDelivery, WebhookErrorCode, WebhookEvent, WebhookOptions, WebhookRequest } from '@hookguard/core'
export { WebhookError } from '@hookguard/core'
