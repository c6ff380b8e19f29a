import { createReceiver, type IncomingRequest, type WebhookDelivery, type WebhookOptions } from '@hookguard/core'
import { checkOnError, fromFetchRequest, rawBodyUnavailable, toFetchResponse } from '@hookguard/core/adapter'
import { readNodeBody } from '@hookguard/core/node'
import type { Context, Env, HonoRequest, MiddlewareHandler } from 'hono'
import { createMiddleware } from 'hono/factory'
import { HTTPException } from 'hono/http-exception'
import type { BlankEnv } from 'hono/types'
import type { ContentfulStatusCode } from 'hono/utils/http-status'

const PACKAGE = '@hookguard/hono'
const HOW_TO_MOUNT =
  'Mount webhook() before any middleware that reads the body, or read it there with c.req.text() or c.req.arrayBuffer(), which Hono keeps byte for byte.'

export type HonoWebhookOptions<Payload = unknown> = WebhookOptions<Payload> & {
  /**
   * `'respond'` answers a refused request itself; `'throw'` throws an `HTTPException` whose
   * response is that answer and whose `cause` is the `WebhookError`, for `app.onError`.
   */
  onError?: 'respond' | 'throw'
}

/** What `webhook()` adds to the context: `c.get('webhook')`, its payload typed by the type parameter or the schema. */
export type WebhookVariables<Payload = unknown> = {
  webhook: WebhookDelivery<Payload>
}

/**
 * Hono 4 middleware for the message receiving address, on any runtime (Node, Bun, Deno, Workers).
 * On success `c.get('webhook')` holds `{ mode, payload, rawBody }` and the next handler runs;
 * `c.req.json()` and `c.req.text()` still work there. On failure the request is answered (or
 * thrown, see `onError`) and the next handler never runs.
 *
 * Options: `WebhookOptions`, and `onError`. In the examples `env` holds your secrets: the process
 * environment on Node, Bun and Deno; on Workers, build the middleware from `c.env` (see the README),
 * naming your app's env as the second type parameter (`webhook<unknown, { Bindings: Bindings }>(…)`) so it can be
 * called from your own middleware.
 *
 * @example
 * app.post('/webhooks', webhook({ auth: { mode: 'secret', secret: env.WEBHOOK_SECRET } }), (c) => {
 *   console.log(c.get('webhook').payload)
 *   return c.body(null, 204)
 * })
 */
export function webhook<Payload = unknown, E extends Env = BlankEnv>(
  options: HonoWebhookOptions<Payload>,
): MiddlewareHandler<NoInfer<E> & { Variables: WebhookVariables<Payload> }> {
  const receiver = createReceiver(options, { packageName: PACKAGE })
  const onError = checkOnError(PACKAGE, options.onError, 'throw')

  return createMiddleware<E & { Variables: WebhookVariables<Payload> }>(async function webhookMiddleware(c, next) {
    const result = await receiver.verify(toIncomingRequest(c))
    if (!result.ok) {
      const answer = toFetchResponse(result.response)
      // A duplicate of a delivery already handled is answered, never thrown: it is no refusal.
      if (onError === 'throw' && result.error !== undefined) {
        const status = result.error.status as ContentfulStatusCode
        throw new HTTPException(status, { res: answer, message: result.error.message, cause: result.error })
      }
      return answer
    }
    c.set('webhook', result.delivery)
    if (result.settle === undefined) return next()
    // With dedupe: Hono catches a handler's throw into `c.error`, so the answer says how it went.
    let handled = false
    try {
      await next()
      handled = c.error === undefined && c.res.status < 400
    } finally {
      await result.settle(handled)
    }
  })
}

/**
 * Handler for the token acquisition address (mode `oauth2`); mount it for every method, since
 * OAuth clients POST. Throws a `TypeError` at setup for any other mode.
 *
 * @example
 * app.all('/webhooks/token', tokenEndpoint({ auth: { mode: 'oauth2', appId: 'my-app', secret: env.APP_SECRET } }))
 */
export function tokenEndpoint(options: HonoWebhookOptions): (c: Context) => Promise<Response> {
  const receiver = createReceiver(options, { role: 'token', packageName: PACKAGE })
  return async function tokenHandler(c) {
    return toFetchResponse(await receiver.token(toIncomingRequest(c)))
  }
}

/**
 * Hono's body cache as it is at run time: `c.req.text()` and friends store the promise they read,
 * and a later call for another type re-reads whichever entry is there.
 */
type BodyCache = { [Key in keyof Bodies]?: Bodies[Key] | Promise<Bodies[Key]> }
type Bodies = Required<HonoRequest['bodyCache']>

const encoder = new TextEncoder()

function toIncomingRequest(c: Context): IncomingRequest {
  const { req } = c
  const node = nodeRequestOf(c)
  if (node !== undefined) {
    return {
      method: req.method,
      url: req.url,
      headers: node.rawHeaders,
      body: (limit, declared) => readBody(req, () => readNodeBody(node, limit, HOW_TO_MOUNT, declared)),
    }
  }
  const incoming = fromFetchRequest(req.raw, { howToMount: HOW_TO_MOUNT, readAll: () => req.arrayBuffer() })
  return { ...incoming, body: (limit, declared) => readBody(req, () => incoming.body(limit, declared)) }
}

/**
 * On @hono/node-server the Node request is at hand as `c.env.incoming`, and the core reads it as
 * it reads Express's and Koa's: its raw header lines (that server builds `req.raw.headers` as a
 * Fetch `Headers` only when asked, at several times the cost of a 1 KiB HMAC) and its stream,
 * within the limit, with no copy into a Fetch body. Elsewhere (Bun, Deno, Workers), the `Request`.
 */
function nodeRequestOf(c: Context): NodeRequest | undefined {
  const incoming = (c.env as { incoming?: Partial<NodeRequest> } | undefined)?.incoming
  return Array.isArray(incoming?.rawHeaders) && typeof incoming.on === 'function' ? (incoming as NodeRequest) : undefined
}

/** Node's `IncomingMessage`, named without importing a Node module (this file runs everywhere). */
type NodeRequest = Parameters<typeof readNodeBody>[0]

/**
 * Reads the body through Hono's cache, so that the handler can still call `c.req.json()`: the
 * bytes a middleware before us cached are reused, and the bytes we read are cached for after.
 */
function readBody(req: HonoRequest, read: () => Promise<Uint8Array>): Promise<Uint8Array> {
  const cache = req.bodyCache as BodyCache
  if (!isEmpty(cache)) return cachedOrUnavailable(cache)
  const bytes = read()
  // Hono reads its cache with `for…in` and by name; a class whose entry copies the bytes into an
  // ArrayBuffer of their own only when asked serves both, at the cost of one object. Cached as a
  // promise, as Hono caches its own reads, so this reader need not wait for the bytes itself.
  // (Hono types the entries as values; they are promises of them, as `BodyCache` says.) A read
  // through Hono's own `arrayBuffer()` (the Fetch path, for cached bytes) has cached itself.
  if (isEmpty(req.bodyCache)) req.bodyCache = new ReadBody(bytes) as BodyCache as HonoRequest['bodyCache']
  return bytes
}

/** Whether Hono's body cache holds nothing, asked as Hono itself walks it (`for…in`), without a list of keys per request. */
function isEmpty(cache: object): boolean {
  for (const _ in cache) return false
  return true
}

/**
 * Hono's body cache after webhook() read the body: the `arrayBuffer` entry, made when first read,
 * since most handlers read `c.get('webhook')` instead. Other entries Hono adds as it derives them.
 */
class ReadBody {
  readonly #bytes: Promise<Uint8Array>
  #arrayBuffer: Promise<ArrayBuffer> | undefined

  constructor(bytes: Promise<Uint8Array>) {
    this.#bytes = bytes
  }

  get arrayBuffer(): Promise<ArrayBuffer> {
    this.#arrayBuffer ??= this.#bytes.then(ownBuffer)
    return this.#arrayBuffer
  }

  set arrayBuffer(value: Promise<ArrayBuffer>) {
    this.#arrayBuffer = value
  }
}
// Enumerable, so Hono's `for…in` over the cache finds it to derive `text`, `blob` or `formData`.
Object.defineProperty(ReadBody.prototype, 'arrayBuffer', { enumerable: true })

async function cachedOrUnavailable({ arrayBuffer, blob, text }: BodyCache): Promise<Uint8Array> {
  if (arrayBuffer !== undefined) return new Uint8Array(await arrayBuffer)
  if (blob !== undefined) return new Uint8Array(await (await blob).arrayBuffer())
  // Text was decoded as UTF-8; encoding it again gives back the bytes received for any UTF-8 body
  // without a byte order mark, and any other body fails verification rather than passing.
  if (text !== undefined) return encoder.encode(await text)
  // Parsed JSON or form data cannot be turned back into the bytes that were signed.
  throw rawBodyUnavailable(HOW_TO_MOUNT)
}

/** The bytes in an `ArrayBuffer` of their own: a stream's chunk may be a view into a larger pool. */
function ownBuffer(bytes: Uint8Array): ArrayBuffer {
  const { buffer, byteOffset, byteLength } = bytes
  if (buffer instanceof ArrayBuffer && byteOffset === 0 && byteLength === buffer.byteLength) return buffer
  // Copied by the typed-array constructor: on Node, a chunk's `slice()` is a view, not a copy.
  return new Uint8Array(bytes).buffer
}

export type { WebhookAuth, WebhookDelivery, WebhookErrorCode, WebhookEvent, WebhookOptions, WebhookRequest } from '@hookguard/core'
export { WebhookError } from '@hookguard/core'
