import type { IncomingMessage } from 'node:http'
import {
  createReceiver,
  type IncomingRequest,
  nodeRequestHeaders,
  rawBodyUnavailable,
  type VerifyResult,
  type WebhookDelivery,
  type WebhookOptions,
  type WebhookResponse,
} from '@hookguard/core'
import type { Request, RequestHandler, Response } from 'express'
import getRawBody from 'raw-body'

const HOW_TO_MOUNT =
  'Mount webhook() before express.json() and other body parsers, or keep a raw copy with their verify option: express.json({ verify: (req, _res, buf) => { req.rawBody = buf } }).'

export type ExpressWebhookOptions = WebhookOptions & {
  /** `'respond'` answers a refused request itself; `'next'` hands the `WebhookError` to `next(err)`. */
  onError?: 'respond' | 'next'
}

/** A verified delivery in Express: the bytes received are a `Buffer`. */
export type ExpressWebhookDelivery = WebhookDelivery<unknown, Buffer>

/** What `webhook()` adds to the request. */
export interface WebhookVariables {
  webhook: ExpressWebhookDelivery
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
 * Express 4 and 5 middleware for the message receiving address. On success `req.webhook` holds
 * `{ mode, payload, rawBody }`, `req.body` the payload, and the next handler runs; on failure the
 * request is answered (or passed on, see `onError`) and the next handler never runs.
 *
 * Options (besides `onError`, those of `@hookguard/core`):
 * - `auth`: `{ mode: 'secret', secret }` (a string, several for rotation, or a function of the
 *   request), `{ mode: 'basic', username, password }` or `{ mode: 'basic', verify }`,
 *   `{ mode: 'oauth2', appId, secret }`, or `{ mode: 'none' }`. Required.
 * - `maxBodySize`: largest body in bytes; default 1 MiB.
 * - `maxDepth`: deepest JSON nesting; default 1000.
 * - `signatureHeader`: default `'X-Service-Hmac-Signature'`.
 * - `onError`: `'respond'` (default) writes the JSON error answer; `'next'` calls `next(err)`
 *   with the `WebhookError` (it carries `status`, `code` and `headers`).
 *
 * Mount it before `express.json()`, or keep a raw copy in `req.rawBody` with a body-parser
 * `verify` hook; `express.raw()` and `express.text()` bodies are used as they are.
 *
 * @example
 * const auth = { mode: 'secret', secret: process.env.WEBHOOK_SECRET } as const
 * app.post('/hooks', webhook({ auth }), (req, res) => {
 *   console.log(req.webhook?.payload)
 *   res.sendStatus(204)
 * })
 */
export function webhook(options: ExpressWebhookOptions): RequestHandler {
  const receiver = createReceiver(options, { packageName: '@hookguard/express' })
  const onError = checkOnError(options.onError)

  return async function webhookMiddleware(req, res, next) {
    let result: VerifyResult
    try {
      result = await receiver.verify(toIncomingRequest(req))
    } catch (error) {
      // Only the application's own resolver or Basic `verify` throws, and Express 4 would ignore
      // the rejected promise: its error goes to the app's error handling.
      next(error)
      return
    }
    if (result.ok) {
      // The core hands back the bytes the body source gave it, and bodyOf gives only Buffers.
      req.webhook = result.delivery as ExpressWebhookDelivery
      req.body = result.delivery.payload
      next()
    } else if (onError === 'next') {
      next(result.error)
    } else {
      send(res, result.response)
    }
  }
}

/**
 * Handler for the token acquisition address (mode `oauth2`): answers the service's
 * `GET ?appid=…&secret=…&grant_type=client_credentials`, or the same fields as a form POST.
 * Throws a `TypeError` at setup for any other mode.
 *
 * @example
 * const auth = { mode: 'oauth2', appId: 'my-app', secret: process.env.WEBHOOK_SECRET } as const
 * app.all('/token', tokenEndpoint({ auth }))
 */
export function tokenEndpoint(options: ExpressWebhookOptions): RequestHandler {
  const receiver = createReceiver(options, { role: 'token', packageName: '@hookguard/express' })
  return function tokenHandler(req, res, next) {
    receiver
      .token(toIncomingRequest(req))
      .then((answer) => send(res, answer))
      .catch(next)
  }
}

function checkOnError(onError: unknown): 'respond' | 'next' {
  if (onError === undefined) return 'respond'
  if (onError === 'respond' || onError === 'next') return onError
  throw new TypeError("@hookguard/express: onError must be 'respond' or 'next'")
}

function toIncomingRequest(req: Request): IncomingRequest {
  // originalUrl keeps the mount path and the query that a router strips from req.url.
  return { method: req.method, url: req.originalUrl, origin: originOf(req), headers: nodeRequestHeaders(req), body: bodyOf(req) }
}

/**
 * The origin the request was sent to, as Express 5's `req.host` reads it (Express 4 has no
 * getter that keeps the port): the Host header, or X-Forwarded-Host when `trust proxy` trusts
 * the peer; `req.protocol` honours the same setting.
 */
function originOf(req: Request): string | undefined {
  const trust = req.app.get('trust proxy fn') as ((address: string | undefined, hop: number) => boolean) | undefined
  const forwarded = trust?.(req.socket.remoteAddress, 0) === true ? req.get('x-forwarded-host')?.split(',')[0]?.trim() : undefined
  const host = forwarded || req.get('host')
  return host ? `${req.protocol}://${host}` : undefined
}

function bodyOf(req: Request): IncomingRequest['body'] {
  const copy = rawCopy(req)
  if (copy !== undefined) return copy
  return (limit) => {
    if (isConsumed(req)) throw rawBodyUnavailable(HOW_TO_MOUNT)
    return getRawBody(req, { limit, length: req.headers['content-length'] })
  }
}

/**
 * The bytes a parser kept: `req.rawBody` from a body-parser `verify` hook (or a platform such as
 * Cloud Functions), else the body of `express.raw()` (a Buffer) or `express.text()` (a string).
 */
function rawCopy(req: Request): Buffer | undefined {
  const { rawBody } = req as { rawBody?: unknown }
  for (const candidate of [rawBody, req.body as unknown]) {
    if (Buffer.isBuffer(candidate)) return candidate
    // A view of the same memory, not a copy: the delivery's rawBody is a Buffer on Node.
    if (candidate instanceof Uint8Array) return Buffer.from(candidate.buffer, candidate.byteOffset, candidate.byteLength)
    if (typeof candidate === 'string') return Buffer.from(candidate, 'utf8')
  }
  return undefined
}

/** body-parser flags a request it read with `_body`; any other reader leaves the stream read. */
function isConsumed(req: IncomingMessage): boolean {
  return (req as { _body?: unknown })._body === true || req.readableEnded || req.readableDidRead
}

function send(res: Response, { status, headers, body }: WebhookResponse): void {
  res.writeHead(status, headers).end(body)
}

export type { WebhookAuth, WebhookDelivery, WebhookErrorCode, WebhookMode, WebhookOptions, WebhookRequest } from '@hookguard/core'
export { WebhookError } from '@hookguard/core'
