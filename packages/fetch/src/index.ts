import { createReceiver, type WebhookDelivery, type WebhookOptions } from '@hookguard/core'
import { checkOnError, fromFetchRequest, toFetchResponse } from '@hookguard/core/adapter'

const PACKAGE = '@hookguard/fetch'
const HOW_TO_MOUNT =
  'Hand the request to the function webhook() returns before anything reads its body (request.json(), request.text(), request.formData()); the handler gets the parsed payload and the raw bytes in its delivery.'

/** The core's options, and how a refusal is answered. */
export type FetchWebhookOptions<Payload = unknown> = WebhookOptions<Payload> & {
  /**
   * `'respond'` (default) answers a refusal itself; `'throw'` rejects with the `WebhookError`
   * (`status`, `headers`, `expose`, as `http-errors` has them), for the platform's own error
   * handling: `Bun.serve`'s `error`, `Deno.serve`'s `onError`, an error boundary.
   */
  onError?: 'respond' | 'throw'
}

/**
 * What runs once a delivery is verified: its answer is the answer. It gets the request too, whose
 * body has been read (use `delivery.payload` and `delivery.rawBody`), and the platform's own
 * arguments after it: Next.js's `{ params }`, a Worker's `env` and `ctx`.
 */
export type WebhookHandler<Payload = unknown, Rest extends unknown[] = unknown[]> = (
  delivery: WebhookDelivery<Payload>,
  request: Request,
  ...rest: Rest
) => Response | Promise<Response>

/**
 * A handler for the message receiving address on any `(request) => Response` platform. A genuine
 * delivery is handed to `handler(delivery, request, ...rest)`, whose `Response` is the answer; any
 * other request is answered (or thrown, see `onError`) and `handler` never runs. `delivery` is
 * `{ mode, payload, rawBody }`, `Payload` typed by the type parameter or the `schema` option.
 *
 * Options: `WebhookOptions`, and `onError`. The body is read here, once and never cloned: nothing
 * may read it before.
 *
 * @example
 * // app/webhooks/route.ts (Next.js), with `export` before it; `env` holds your secrets
 * const POST = webhook({ auth: { mode: 'secret', secret: env.WEBHOOK_SECRET } }, (delivery) => {
 *   console.log(delivery.payload)
 *   return new Response(null, { status: 204 })
 * })
 */
export function webhook<Payload = unknown, Rest extends unknown[] = unknown[]>(
  options: FetchWebhookOptions<Payload>,
  handler: WebhookHandler<Payload, Rest>,
): (request: Request, ...rest: Rest) => Promise<Response> {
  const receiver = createReceiver(options, { packageName: PACKAGE })
  const onError = checkOnError(PACKAGE, options.onError, 'throw')

  return async function webhookHandler(request, ...rest) {
    const result = await receiver.verify(fromFetchRequest(request, { howToMount: HOW_TO_MOUNT }))
    if (!result.ok) {
      // A duplicate of a delivery already handled has no error: it is answered, never thrown.
      if (onError === 'throw' && result.error !== undefined) throw result.error
      return toFetchResponse(result.response)
    }
    if (result.settle === undefined) return handler(result.delivery, request, ...rest)
    // With dedupe: the claim is settled before the answer leaves, since a serverless platform may
    // freeze the function once it has answered. A refusal of the handler's own (4xx, 5xx) or a
    // throw releases the delivery for the service's retry.
    let handled = false
    try {
      const answer = await handler(result.delivery, request, ...rest)
      handled = answer.status < 400
      return answer
    } finally {
      await result.settle(handled)
    }
  }
}

/**
 * Handler for the token acquisition address (mode `oauth2`); route every method to it, since
 * OAuth clients POST. Throws a `TypeError` at setup for any other mode.
 *
 * @example
 * // app/webhooks/token/route.ts (Next.js), each with `export` before it
 * const oauth = { auth: { mode: 'oauth2', appId: 'my-app', secret: env.APP_SECRET } } as const
 * const GET = tokenEndpoint(oauth)
 * const POST = tokenEndpoint(oauth)
 */
export function tokenEndpoint(options: WebhookOptions): (request: Request) => Promise<Response> {
  const receiver = createReceiver(options, { role: 'token', packageName: PACKAGE })
  return async function tokenHandler(request) {
    return toFetchResponse(await receiver.token(fromFetchRequest(request, { howToMount: HOW_TO_MOUNT })))
  }
}

export type { WebhookAuth, WebhookDelivery, WebhookErrorCode, WebhookEvent, WebhookOptions, WebhookRequest } from '@hookguard/core'
export { WebhookError } from '@hookguard/core'
