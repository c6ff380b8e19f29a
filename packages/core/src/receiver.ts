import { createAuthenticator } from './authenticate.ts'
import { declaredBodyLength, readLimited } from './body.ts'
import { utf8 } from './bytes.ts'
import { payloadTooLarge, WebhookError } from './errors.ts'
import { parseJson } from './json.ts'
import { checkOptions, type Settings, type WebhookMode, type WebhookOptions } from './options.ts'
import { type BodySource, type IncomingRequest, toWebhookRequest, type WebhookRequest } from './request.ts'
import { errorResponse, type WebhookResponse } from './response.ts'
import { createTokenIssuer, tokenErrorResponse } from './token-endpoint.ts'
import { TokenKeys } from './token-keys.ts'

/**
 * A verified delivery, as the handler after the middleware sees it. `RawBody` is what the bytes
 * are where it runs: a `Buffer` in the Node adapters (Express, Koa), a `Uint8Array` elsewhere.
 */
export interface WebhookDelivery<Payload = unknown, RawBody extends Uint8Array = Uint8Array> {
  mode: WebhookMode
  /** The parsed JSON body (the form's fields, for a token sent as a form field). */
  payload: Payload
  /** The bytes received. */
  rawBody: RawBody
}

export type VerifyResult = { ok: true; delivery: WebhookDelivery } | { ok: false; error: WebhookError; response: WebhookResponse }

export interface Receiver {
  readonly mode: WebhookMode
  /**
   * The message receiving address. Resolves a verified delivery or the answer to send; rejects
   * only when the application's own code (a resolver or a Basic `verify`) throws.
   */
  verify(request: IncomingRequest): Promise<VerifyResult>
  /** The token acquisition address (mode `oauth2`): always resolves the answer to send. */
  token(request: IncomingRequest): Promise<WebhookResponse>
}

/** What a receiver is built for, and who built it. */
export interface ReceiverSetup {
  /**
   * `'webhook'` (the default), or `'token'`, which requires mode `oauth2` so that a token address
   * mounted with the wrong settings fails at startup, not per request.
   */
  role?: 'webhook' | 'token'
  /** The package setup mistakes are reported under: an adapter passes its own name. Default `@hookguard/core`. */
  packageName?: string
}

/**
 * Builds the framework-agnostic receiver every adapter is made of. Options are checked here,
 * once; a mistake throws a `TypeError` whose message starts with the package's name.
 *
 * @example
 * const receiver = createReceiver({ auth: { mode: 'secret', secret: process.env.WEBHOOK_SECRET! } })
 * const result = await receiver.verify(request) // a Fetch Request, or { method, url, headers, body }
 * if (!result.ok) return new Response(result.response.body, result.response)
 */
export function createReceiver(
  options: WebhookOptions,
  { role = 'webhook', packageName = '@hookguard/core' }: ReceiverSetup = {},
): Receiver {
  const settings = checkOptions(options, packageName)
  const { auth, maxDepth } = settings
  // Stryker disable next-line StringLiteral: message text only — the setup TypeError is pinned
  if (role === 'token' && auth.mode !== 'oauth2') settings.fail(`a token endpoint needs auth.mode 'oauth2', not '${auth.mode}'`)
  // One set of token keys for both addresses: derived once, with the slow KDF, at setup.
  const tokens = auth.mode === 'oauth2' ? new TokenKeys(auth) : undefined
  const authenticate = createAuthenticator(settings, tokens)
  const issue = tokens === undefined ? undefined : createTokenIssuer(tokens, settings)

  return {
    mode: auth.mode,

    async verify(incoming) {
      const req = toWebhookRequest(incoming)
      const readBody = bodyReader(incoming, req, settings)
      try {
        // Authentication always comes first: a body that fails it is never parsed or handed on.
        const pending = authenticate(req, readBody)
        const authenticated = pending instanceof Promise ? await pending : pending
        const rawBody = await readBody()
        let payload: unknown
        if (authenticated !== undefined) {
          payload = authenticated.payload
        } else {
          const parsed = parseJson(rawBody, maxDepth)
          if (parsed === undefined) {
            // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
            throw new WebhookError('invalid_json', `The body is not JSON, or nests deeper than ${maxDepth} levels.`)
          }
          payload = parsed.value
        }
        return { ok: true, delivery: { mode: auth.mode, payload, rawBody } }
      } catch (error) {
        if (!(error instanceof WebhookError)) throw error
        const refusal = await afterRefusal(error, readBody)
        return { ok: false, error: refusal, response: errorResponse(refusal) }
      }
    },

    async token(incoming) {
      if (issue === undefined) {
        return tokenErrorResponse(new WebhookError('method_not_allowed', 'This address issues no tokens.'))
      }
      const req = toWebhookRequest(incoming)
      const readBody = bodyReader(incoming, req, settings)
      try {
        return await issue(req, readBody)
      } catch (error) {
        if (!(error instanceof WebhookError)) throw error
        return tokenErrorResponse(await afterRefusal(error, readBody))
      }
    },
  }
}

/**
 * Reads the body at most once, refusing before any byte is read when the headers already say
 * it is too large or compressed.
 */
function bodyReader(incoming: IncomingRequest, req: WebhookRequest, { maxBodySize }: Settings): () => Promise<Uint8Array> {
  let body: Promise<Uint8Array> | undefined
  return () => {
    body ??= read()
    return body
  }

  async function read(): Promise<Uint8Array> {
    const encoding = req.header('content-encoding')
    // The signature is over the bytes the service sent; inflating would need its own limit
    // against decompression bombs, and the service never compresses.
    if (encoding !== null && encoding.trim().toLowerCase() !== 'identity') {
      // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
      throw new WebhookError('unsupported_encoding', 'Compressed bodies are not accepted; send the body uncompressed.')
    }
    const declared = declaredBodyLength(incoming.headers)
    if (declared === 'invalid') {
      // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
      throw new WebhookError('invalid_body', 'Content-Length must be one non-negative integer, and not sent with Transfer-Encoding.')
    }
    if (declared !== undefined && declared > maxBodySize) throw payloadTooLarge(maxBodySize)
    let bytes: Uint8Array
    try {
      const source = readSource(incoming.body, maxBodySize)
      bytes = source instanceof Uint8Array ? source : await source
    } catch (error) {
      throw bodyReadFailure(error, maxBodySize)
    }
    // Bytes a parser or cache already held were read without our limit.
    if (bytes.byteLength > maxBodySize) throw payloadTooLarge(maxBodySize)
    return bytes
  }
}

/**
 * A refusal leaves the connection usable only if the body was read to its end: HTTP/1.1 clients
 * reuse connections, and unread bytes would be taken for the start of the next request (Express and
 * Koa leave the stream paused, so the next delivery stalls). So a body not yet read is drained,
 * within the same limit as a delivery, and where that cannot be done (too large, compressed, cut
 * short, a length that cannot be trusted) the answer says `Connection: close`, which Node and the
 * adapters' servers honour by closing once it is sent.
 */
async function afterRefusal(error: WebhookError, readBody: () => Promise<Uint8Array>): Promise<WebhookError> {
  const drained = await readBody().then(
    () => true,
    // Stryker disable next-line ArrowFunction: equivalent — undefined is as falsy as false for `if (drained)`
    () => false,
  )
  if (drained) return error
  return new WebhookError(error.code, error.message, { headers: { ...error.headers, connection: 'close' }, cause: error.cause })
}

function readSource(body: BodySource, limit: number): Promise<Uint8Array> | Uint8Array {
  if (body instanceof Uint8Array) return body
  if (body instanceof ArrayBuffer) return new Uint8Array(body)
  if (typeof body === 'string') return utf8(body)
  if (typeof body === 'function') return body(limit)
  if (body === null || body === undefined) return new Uint8Array(0)
  return readLimited(body, limit)
}

/** Maps a body reader's failure; a reader of the app's own that follows `http-errors` says 413 by status. */
function bodyReadFailure(error: unknown, maxBodySize: number): WebhookError {
  if (error instanceof WebhookError) return error
  const status =
    (error as { status?: unknown; statusCode?: unknown } | null)?.status ?? (error as { statusCode?: unknown } | null)?.statusCode
  if (status === 413) return payloadTooLarge(maxBodySize)
  return new WebhookError('invalid_body', 'The request body could not be read in full.', { cause: error })
}
