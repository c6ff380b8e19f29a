import { createReceiver, type WebhookDelivery, type WebhookOptions } from '@hookguard/core'
import { checkOnError, type IncomingRequest, type WebhookResponse } from '@hookguard/core/adapter'
import { nodeBody, nodeRequestHeaders, settleWhenAnswered } from '@hookguard/core/node'
import type {
  ContextConfigDefault,
  FastifyBaseLogger,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  FastifyTypeProvider,
  FastifyTypeProviderDefault,
  RawRequestDefaultExpression,
  RawServerBase,
  RawServerDefault,
  RouteGenericInterface,
} from 'fastify'
import type { FastifyRequestType, ResolveFastifyRequestType } from 'fastify/types/type-provider.js'
import fp from 'fastify-plugin'
import { logSerializers } from './log-safety.ts'

const PACKAGE = '@hookguard/fastify'
const HOW_TO_MOUNT =
  'webhook() reads the body itself: in its scope, add no content-type parser (addContentTypeParser, @fastify/formbody) and no preParsing hook that reads the body.'
const PREFIX_REFUSED = `${PACKAGE}: webhook() takes no prefix. It applies to the scope that registers it, which a prefix does not change: register it inside a plugin of your own that holds the webhook routes, and give that plugin the prefix: app.register(async (hooks) => { await hooks.register(webhook(options)); hooks.post('/', handler) }, { prefix: '/hooks' })`
const NOT_VERIFIED = `${PACKAGE}: request.webhook is not set: this route is outside the scope of webhook(), so its body was not verified. Declare the route in the plugin that registers webhook(), after it.`

/** The core's options, and how a refusal is answered. */
export type FastifyWebhookOptions<Payload = unknown> = WebhookOptions<Payload> & {
  /** `'respond'` (default) answers a refusal itself; `'throw'` throws the `WebhookError` for Fastify's error handler. */
  onError?: 'respond' | 'throw'
}

/** A verified delivery in Fastify: the bytes received are a `Buffer`. */
export type FastifyWebhookDelivery<Payload = unknown> = WebhookDelivery<Payload, Buffer>

/** What `webhook()` adds to a request in its scope (`requireWebhook(request)` returns it). */
export interface WebhookVariables<Payload = unknown> {
  webhook: FastifyWebhookDelivery<Payload>
}

declare module 'fastify' {
  interface FastifyRequest<
    RouteGeneric extends RouteGenericInterface = RouteGenericInterface,
    RawServer extends RawServerBase = RawServerDefault,
    RawRequest extends RawRequestDefaultExpression<RawServer> = RawRequestDefaultExpression<RawServer>,
    SchemaCompiler extends FastifySchema = FastifySchema,
    TypeProvider extends FastifyTypeProvider = FastifyTypeProviderDefault,
    ContextConfig = ContextConfigDefault,
    Logger extends FastifyBaseLogger = FastifyBaseLogger,
    RequestType extends FastifyRequestType = ResolveFastifyRequestType<TypeProvider, SchemaCompiler, RouteGeneric>,
  > {
    /**
     * The verified delivery, set by `webhook()` before validation and the handler run, in its
     * scope only. Absent on a route outside it (the decoration is the scope's, as the hook is),
     * whose body nobody verified; `null` in it until the hook has run. `requireWebhook(request)`
     * gives it or refuses the request. Its payload is typed as the route's body (`Body`, or its
     * schema's type).
     */
    webhook?: FastifyWebhookDelivery<RequestType['body']> | null
  }
}

/**
 * Fastify 5 plugin for the message receiving address (options: `WebhookOptions`). Register it in
 * the plugin that declares your webhook routes: in that scope, every request is verified before
 * validation and the handler; on success `request.webhook` holds `{ mode, payload, rawBody }` and
 * `request.body` the payload, on failure the request is answered (or the `WebhookError` thrown for
 * `setErrorHandler`) and the handler never runs. The scope's bodies are left to hookguard, which
 * reads them with its own limit and errors, whatever their type; the rest of the app keeps its
 * parsers and `bodyLimit`. Its routes log their URL without credentials (`logSerializers`).
 * Registered with a `prefix`, it throws a `TypeError`: a `fastify-plugin` takes no prefix, so
 * give the prefix to the plugin that holds it and the routes.
 *
 * @example
 * app.register(async (hooks) => {
 *   await hooks.register(webhook({ auth: { mode: 'secret', secret: process.env.WEBHOOK_SECRET! } }))
 *   hooks.post('/webhooks', async (request, reply) => {
 *     console.log(requireWebhook(request).payload)
 *     return reply.code(204).send()
 *   })
 * })
 */
export function webhook<Payload = unknown>(options: FastifyWebhookOptions<Payload>): FastifyPluginAsync {
  const receiver = createReceiver<Payload>(options, { packageName: PACKAGE })
  const onError = checkOnError(PACKAGE, options.onError, 'throw')

  async function hookguardWebhook(scope: FastifyInstance, registration: { prefix?: string }) {
    // fastify-plugin drops the prefix: the hook would then cover every route of the parent, not
    // the routes under the prefix. Refused rather than ignored.
    if (registration?.prefix !== undefined) throw new TypeError(PREFIX_REFUSED)
    leaveBodiesToHookguard(scope)
    if (!scope.hasRequestDecorator('webhook')) scope.decorateRequest<FastifyWebhookDelivery | null>('webhook', null)
    // preValidation, the first hook after parsing: a route's body schema then checks the payload.
    scope.addHook('preValidation', async function verifyWebhook(request, reply) {
      // No route: Fastify's 404 answers, and nothing would receive a delivery.
      if (request.is404) return
      const result = await receiver.verify(toIncomingRequest(request))
      if (!result.ok) {
        if (onError === 'throw' && result.error) throw result.error
        return send(reply, result.response)
      }
      if (result.settle) settleWhenAnswered(reply.raw, result.settle)
      // The body source gives only Buffers, and the core hands back the bytes it was given.
      request.webhook = result.delivery as FastifyWebhookDelivery
      request.body = result.delivery.payload
    })
  }
  // Not encapsulated: its parser and hook apply to the scope that registers it.
  return fp(hookguardWebhook, { fastify: '5.x', name: `${PACKAGE}/webhook` })
}

/**
 * Fastify 5 plugin for the token acquisition address (mode `oauth2`): register it with the
 * address as its `prefix`. It answers every method (the service sends a `GET`, OAuth client
 * libraries a form `POST`, with or without HTTP Basic); its form bodies are read by hookguard, so
 * the app needs no form parser. Throws a `TypeError` at setup for any other mode.
 *
 * @example
 * const auth = { mode: 'oauth2', appId: 'my-app', secret: process.env.APP_SECRET! } as const
 * app.register(tokenEndpoint({ auth }), { prefix: '/webhooks/token' })
 */
export function tokenEndpoint(options: FastifyWebhookOptions): FastifyPluginAsync {
  const receiver = createReceiver(options, { role: 'token', packageName: PACKAGE })
  return async function hookguardTokenEndpoint(scope) {
    leaveBodiesToHookguard(scope)
    scope.all('/', async function issueToken(request, reply) {
      return send(reply, await receiver.token(toIncomingRequest(request)))
    })
  }
}

/**
 * The verified delivery of a request in `webhook()`'s scope, typed by the route's body. On a
 * route outside that scope (declared in the parent or in a sibling plugin, or before `webhook()`
 * was registered), nothing verified the body: it throws an error that Fastify answers 500, with
 * `code: 'HOOKGUARD_NOT_VERIFIED'`, before the handler can act on an unverified body.
 *
 * @example
 * app.register(async (hooks) => {
 *   await hooks.register(webhook({ auth: { mode: 'secret', secret: process.env.WEBHOOK_SECRET! } }))
 *   hooks.post<{ Body: { event: string } }>('/webhooks', async (request, reply) => {
 *     const { payload } = requireWebhook(request) // payload: { event: string }
 *     request.log.info({ event: payload.event }, 'verified delivery')
 *     return reply.code(204).send()
 *   })
 * })
 */
export function requireWebhook<Payload>(request: { webhook?: FastifyWebhookDelivery<Payload> | null }): FastifyWebhookDelivery<Payload> {
  // Absent outside the scope, null in it before the hook has run.
  if (request.webhook) return request.webhook
  // A mistake in the app's setup, not the sender's: a 5xx the sender retries once it is fixed.
  throw Object.assign(new Error(NOT_VERIFIED), { code: 'HOOKGUARD_NOT_VERIFIED', statusCode: 500 })
}

/**
 * Fastify's parsers would read the body before any hook, under its `bodyLimit` and with its 415
 * for unknown types; a parser that reads nothing leaves every body to the core, which reads it
 * with `maxBodySize` and answers in its own codes. Fastify's bodyLimit applies only to its own
 * parsers, so it no longer applies here.
 */
function leaveBodiesToHookguard(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser('*', function leaveUnread(_request, _payload, done) {
    done(null)
  })
  scope.addHook('onRoute', (route) => {
    // Only where the route sets no request serializer of its own.
    if (!Object.hasOwn(route.logSerializers ?? {}, 'req')) {
      route.logSerializers = Object.assign(Object.create(route.logSerializers ?? null), { req: logSerializers.req })
    }
  })
}

function toIncomingRequest(request: FastifyRequest): IncomingRequest {
  // request.host and request.protocol read X-Forwarded-* only when trustProxy trusts the peer.
  return {
    method: request.method,
    url: request.url,
    origin: () => `${request.protocol}://${request.host}`,
    headers: nodeRequestHeaders(request.raw),
    body: nodeBody(request.raw, HOW_TO_MOUNT),
  }
}

function send(reply: FastifyReply, { status, headers, body }: WebhookResponse): FastifyReply {
  // A string is written as it is, never serialised again.
  return reply.code(status).headers(headers).send(body)
}
