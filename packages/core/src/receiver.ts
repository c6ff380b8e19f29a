import type { WebhookMode } from './auth.ts'
import { createAuthenticator, type ReadBody } from './authenticate.ts'
import { declaredBodyLength, readLimited } from './body.ts'
import { utf8 } from './bytes.ts'
import { createDedupe, createLook, type DedupeVerdict, noDedupe, storedKey } from './dedupe.ts'
import { scopedKey } from './dedupe-key.ts'
import type { WebhookDelivery } from './delivery.ts'
import { DRAIN_MAX_BYTES, drainedRefusal, wasDrained } from './drain.ts'
import { payloadTooLarge, WebhookError } from './errors.ts'
import { createEmitter } from './events.ts'
import { type Covered, canHashLater, fingerprintNow, fingerprintOf } from './fingerprint.ts'
import { handOff } from './handoff.ts'
import { parseJson } from './json.ts'
import { checkOptions, type WebhookOptions } from './options.ts'
import { type BodySource, type IncomingRequest, LimitedBodyReader, toWebhookRequest, type WebhookRequest } from './request.ts'
import { errorResponse, type WebhookResponse } from './response.ts'
import { validatePayload } from './standard-schema.ts'
import { checkTokenRequestUrl, createTokenIssuer, TOKEN_MAX_BODY_SIZE, tokenErrorResponse } from './token-endpoint.ts'
import { TokenKeys } from './token-keys.ts'

/**
 * A verified delivery, with `settle` (only with `dedupe`) for the adapter to call once the handler
 * has finished: `true` when it succeeded, which remembers the delivery; `false` releases it for the
 * service's retry; and `text`, the body as UTF-8 text when the core decoded it to parse JSON, for
 * an adapter that hands the body on as text (Koa's `ctx.request.rawBody`) without decoding it a
 * second time. Or the answer to send: a refusal with its `error`, or, with no error, a duplicate
 * of a delivery already handled, or (with `handoff`) a delivery now queued for a worker, each
 * answered without running the handler.
 */
export type VerifyResult<Payload = unknown> =
  | { ok: true; delivery: WebhookDelivery<Payload>; settle?: (handled: boolean) => Promise<void>; text?: string }
  | { ok: false; error: WebhookError; response: WebhookResponse }
  | { ok: false; error?: undefined; response: WebhookResponse }

export interface Receiver<Payload = unknown> {
  readonly mode: WebhookMode
  /**
   * The message receiving address. Resolves a verified delivery or the answer to send; rejects
   * only when the application's own code (a resolver or a Basic `verify`) throws.
   */
  verify(request: IncomingRequest): Promise<VerifyResult<Payload>>
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
export function createReceiver<Payload = unknown>(
  options: WebhookOptions<Payload>,
  { role = 'webhook', packageName = '@hookguard/core' }: ReceiverSetup = {},
): Receiver<Payload> {
  const settings = checkOptions(options, packageName)
  const { auth, maxDepth, schema } = settings
  const events = createEmitter(settings.onEvent, packageName)
  const { handoff } = settings
  // With a hand-off no handler runs here: the store is only looked at (see createLook), and claimed by the worker.
  const dedupe = settings.dedupe === undefined || handoff !== undefined ? noDedupe : createDedupe(settings.dedupe, packageName)
  const look = settings.dedupe === undefined || handoff === undefined ? undefined : createLook(settings.dedupe, packageName)
  const duplicateStatus = settings.dedupe?.duplicateStatus ?? 200
  // Stryker disable next-line StringLiteral: message text only — the setup TypeError is pinned
  if (role === 'token' && auth.mode !== 'oauth2') settings.fail(`a token endpoint needs auth.mode 'oauth2', not '${auth.mode}'`)
  // One set of token keys for both addresses: derived once, with the slow KDF, at setup.
  const tokens = auth.mode === 'oauth2' ? new TokenKeys(auth) : undefined
  const authenticate = createAuthenticator(settings, tokens)
  const issue = tokens === undefined ? undefined : createTokenIssuer(tokens, settings)
  const tellOwner = ownerNotice(packageName)

  return {
    mode: auth.mode,

    async verify(incoming) {
      const started = performance.now()
      const req = toWebhookRequest(incoming)
      const reader = new BodyReader(incoming, req, settings.maxBodySize)
      const readBody = reader.read
      try {
        // Authentication always comes first: a body that fails it is never parsed or handed on.
        const authenticated = await authenticate(req, readBody)
        const { form, signature, body } = authenticated
        // Stryker disable next-line LogicalOperator: speed only — readBody() resolves the same bytes
        const rawBody = body ?? (await readBody())
        let payload: unknown
        let text: string | undefined
        if (form !== undefined) {
          payload = form.payload
        } else {
          // In mode 'none' nothing authenticated the body, so it is checked to be JSON before it is
          // decoded or parsed: refusing it then costs one pass over its bytes (docs/benchmarks.md).
          const parsed = parseJson(rawBody, maxDepth, auth.mode === 'none')
          if (parsed === undefined) {
            // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
            throw new WebhookError('invalid_json', `The body is not JSON, or nests deeper than ${maxDepth} levels.`)
          }
          payload = parsed.value
          text = parsed.text
        }
        // Typed by the schema when there is one; otherwise `Payload` is the caller's own claim.
        if (schema !== undefined) payload = await validatePayload(schema, payload)
        const mode = auth.mode
        const covered: Covered = signature ?? { form: 'exact', text: form === undefined ? rawBody : form.covered }
        if (settings.dedupe === undefined && handoff === undefined && !events.wanted('verified') && canHashLater(covered)) {
          return { ok: true, delivery: new Delivery(mode, payload as Payload, rawBody, covered, undefined), text }
        }
        const fingerprint = await fingerprintOf(rawBody, covered)
        const delivery = new Delivery(mode, payload as Payload, rawBody, covered, fingerprint)
        const keyOf = () => scopedKey(settings, authenticated, req, fingerprint)
        let verdict: DedupeVerdict
        let key: string | undefined
        if (handoff === undefined) {
          verdict = await dedupe(req, delivery, keyOf)
        } else {
          key = await storedKey(settings.dedupe?.key, req, delivery, keyOf, packageName)
          verdict = look === undefined ? { kind: 'claimed' } : await look(key, fingerprint)
        }
        if (verdict.kind !== 'claimed') {
          // A duplicate is answered without running the handler (or queueing a job): 409 while the first is handled, the first's answer after.
          if (events.wanted('duplicate')) {
            const state = verdict.kind
            events.emit({ type: 'duplicate', mode, fingerprint, state, durationMs: performance.now() - started })
          }
          return verdict.kind === 'done'
            ? { ok: false, response: verdict.response }
            : { ok: false, error: verdict.error, response: errorResponse(verdict.error) }
        }
        if (events.wanted('verified')) {
          const durationMs = performance.now() - started
          events.emit({
            type: 'verified',
            mode,
            ...(signature && { form: signature.form }),
            fingerprint,
            bodyBytes: rawBody.byteLength,
            durationMs,
          })
        }
        if (handoff === undefined || key === undefined)
          return { ok: true, delivery, text, ...(verdict.settle && { settle: verdict.settle }) }
        // The answer says queued only once the queue holds the job: no 2xx for a delivery that could still be lost.
        // A form's bytes without its `access_token` field: the job never holds the token.
        const bytes = form === undefined ? rawBody : form.covered
        const handed = await handOff(handoff, req, delivery, key, duplicateStatus, settings.clock(), bytes)
        if (handed.queued) {
          if (events.wanted('queued')) {
            events.emit({ type: 'queued', mode, fingerprint, jobId: handed.jobId, durationMs: performance.now() - started })
          }
        } else if (events.wanted('duplicate')) {
          events.emit({ type: 'duplicate', mode, fingerprint, state: 'queued', durationMs: performance.now() - started })
        }
        return { ok: false, response: handed.response }
      } catch (error) {
        if (!(error instanceof WebhookError)) throw error
        const { refusal, bodyBytes } = await afterRefusal(error, reader)
        if (refusal.code === 'raw_body_unavailable') tellOwner(refusal)
        if (events.wanted('rejected')) {
          const { code, status, hint } = refusal
          const durationMs = performance.now() - started
          events.emit({
            type: 'rejected',
            mode: auth.mode,
            code,
            status,
            ...(bodyBytes !== undefined && { bodyBytes }),
            ...(hint && { hint }),
            durationMs,
          })
        }
        return { ok: false, error: refusal, response: errorResponse(refusal) }
      }
    },

    async token(incoming) {
      if (issue === undefined) {
        // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
        return tokenErrorResponse(new WebhookError('method_not_allowed', 'This address issues no tokens.'))
      }
      const started = performance.now()
      const req = toWebhookRequest(incoming)
      // Its own small limit, whatever maxBodySize is: the token address reads a body before any
      // credential is checked, and a token request is a few hundred bytes.
      const reader = new BodyReader(incoming, req, TOKEN_MAX_BODY_SIZE)
      try {
        checkTokenRequestUrl(incoming.url)
        const answer = await issue(req, reader.read)
        if (events.wanted('token_issued')) {
          events.emit({
            type: 'token_issued',
            mode: auth.mode,
            expiresIn: (tokens as TokenKeys).ttl,
            durationMs: performance.now() - started,
          })
        }
        return answer
      } catch (error) {
        if (!(error instanceof WebhookError)) throw error
        const { refusal } = await afterRefusal(error, reader)
        if (events.wanted('token_refused')) {
          const { code, status } = refusal
          events.emit({ type: 'token_refused', mode: auth.mode, code, status, durationMs: performance.now() - started })
        }
        return tokenErrorResponse(refusal)
      }
    },
  }
}

/**
 * A mounting mistake the sender is told of (the answer's message) but the app's owner would not
 * be: their log shows a 500 at most, from a route that looks right. Said once per receiver (per
 * middleware), on the console, with the adapter's fix: the message is the same text for every
 * request, and holds no part of it, no body and no credential.
 */
function ownerNotice(packageName: string): (refusal: WebhookError) => void {
  let told = false
  return (refusal) => {
    if (told) return
    told = true
    console.warn(`${packageName}: a delivery was refused with 500 ${refusal.code}. ${refusal.message} (Said once per middleware.)`)
  }
}

/**
 * A verified delivery. A class, so that a fingerprint hashed only when first read (`undefined`
 * until then, see `canHashLater`) costs neither a closure nor an `Object.defineProperty` per
 * delivery, which V8 runs on its slow path (see docs/benchmarks.md). `fingerprint` is a getter of
 * the class, so a spread or `JSON.stringify` of the delivery leaves it out; read it by name.
 */
class Delivery<Payload> implements WebhookDelivery<Payload> {
  mode: WebhookMode
  payload: Payload
  rawBody: Uint8Array
  // The bytes received, kept apart from `rawBody`, which the application may replace.
  readonly #received: Uint8Array
  readonly #covered: Covered
  #fingerprint: string | undefined

  constructor(mode: WebhookMode, payload: Payload, rawBody: Uint8Array, covered: Covered, fingerprint: string | undefined) {
    this.mode = mode
    this.payload = payload
    this.rawBody = rawBody
    this.#received = rawBody
    this.#covered = covered
    this.#fingerprint = fingerprint
  }

  get fingerprint(): string {
    this.#fingerprint ??= fingerprintNow(this.#received, this.#covered)
    return this.#fingerprint
  }
}

/**
 * Reads the body at most once, within `maxBodySize` (the token address passes its own limit),
 * refusing before any byte is read when the headers already say it is too large or compressed; or,
 * once a request is refused before its body was read, `discard()` reads it only to throw it away (a
 * limit of nothing, so within the drain's bounds in bytes, time and idleness from the first byte,
 * and nothing kept): an unauthenticated sender that trickles its body, or stops, holds neither
 * memory nor the connection past them. Written without `async`: a delivery already awaits its body
 * in the authenticator, and each async call more costs it an allocation (see docs/benchmarks.md,
 * notes); every refusal, thrown here or by the adapter's reader, still arrives as a rejection.
 *
 * A class, not a function given a `discard` property: a property added to a function made per
 * request kept every request's objects alive through V8's young-generation collections, which then
 * copied and promoted them (bench/notes.md, 2026-11-28, in process).
 */
class BodyReader {
  readonly #incoming: IncomingRequest
  readonly #req: WebhookRequest
  readonly #maxBodySize: number
  #body: Promise<Uint8Array> | undefined

  constructor(incoming: IncomingRequest, req: WebhookRequest, maxBodySize: number) {
    this.#incoming = incoming
    this.#req = req
    this.#maxBodySize = maxBodySize
  }

  /**
   * The body within the limit, for the authenticator, which calls it on its own. A compressed body
   * is refused before a byte is read, and left for `discard()`, which drains it like any other: a
   * sender that writes its whole body first then reads the 415, where a close with its bytes
   * unread would reset the connection and take the answer with it.
   */
  readonly read: ReadBody = () => {
    if (this.#body === undefined) {
      // Read once here: the length's check needs it too.
      const transferEncoding = this.#req.header('transfer-encoding')
      if (!asSent(this.#req.header('content-encoding'), transferEncoding)) return Promise.reject(unsupportedEncoding())
      this.#body = this.#readWithin(this.#maxBodySize, transferEncoding)
    }
    return this.#body
  }

  discard(): Promise<Uint8Array> {
    this.#body ??= this.#readWithin(0)
    return this.#body
  }

  #readWithin(limit: number, transferEncoding?: string | null): Promise<Uint8Array> {
    try {
      const incoming = this.#incoming
      const declared = checkedLength(incoming, limit, transferEncoding)
      const { body } = incoming
      // The core's own reader keeps to the limit and refuses with the core's errors: nothing to check again.
      if (body instanceof LimitedBodyReader) return body.read(limit, declared)
      const source = readSource(body, limit, declared)
      if (source instanceof Uint8Array) return Promise.resolve(withinLimit(source, limit))
      return source.then(
        (bytes) => withinLimit(bytes, limit),
        (error: unknown) => Promise.reject(bodyReadFailure(error, limit)),
      )
    } catch (error) {
      return Promise.reject(bodyReadFailure(error, limit))
    }
  }
}

/**
 * The `Content-Length` to read by, once the headers pass: one valid length (over the limit only by
 * what the body reader may drain), or `undefined` for none.
 */
function checkedLength(incoming: IncomingRequest, maxBodySize: number, transferEncoding?: string | null): number | undefined {
  const declared = declaredBodyLength(incoming.headers, transferEncoding)
  if (declared === 'invalid') {
    // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
    throw new WebhookError('invalid_body', 'Content-Length must be one non-negative integer, and not sent with Transfer-Encoding.')
  }
  // A length over the limit is still read, and discarded, by the body reader, so that the answer
  // reaches a sender that writes its whole body first; only one the drain would give up on anyway
  // is refused before reading (and the answer closes the connection).
  // Stryker disable next-line ConditionalExpression: equivalent — undefined > anything is false (→ true survives)
  if (declared !== undefined && declared > maxBodySize + DRAIN_MAX_BYTES) throw payloadTooLarge(maxBodySize)
  return declared
}

/**
 * Whether the body arrives as the service sent it. The signature is over those bytes; inflating
 * would need its own limit against decompression bombs, and the service never compresses. A
 * transfer coding other than chunked (`gzip, chunked`) is a compression too: Node and the
 * frameworks undo the chunks and hand on the compressed bytes, which would be judged as the body.
 */
function asSent(contentEncoding: string | null, transferEncoding: string | null): boolean {
  return (contentEncoding === null || onlyIdentity(contentEncoding)) && onlyChunked(transferEncoding)
}

function unsupportedEncoding(): WebhookError {
  // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
  return new WebhookError('unsupported_encoding', 'Compressed bodies are not accepted; send the body uncompressed.')
}

/**
 * `Content-Encoding` that names no coding but `identity`, the body as sent. Empty elements name
 * none (RFC 9110 §5.6.1.2), so an empty header is no coding at all, as it is where a runtime's
 * front drops it (workerd).
 */
function onlyIdentity(codings: string): boolean {
  return codings.split(',').every((coding) => {
    const name = coding.trim().toLowerCase()
    return name === '' || name === 'identity'
  })
}

/** No `Transfer-Encoding`, or one whose codings are `chunked` and `identity` only: framing, not a transformation of the body. */
function onlyChunked(codings: string | null): boolean {
  return codings === null || codings.split(',').every((coding) => /^(?:chunked|identity)$/i.test(coding.trim()))
}

/** Bytes a parser or cache already held were read without our limit; read to their end, they leave the connection clean. */
function withinLimit(bytes: Uint8Array, maxBodySize: number): Uint8Array {
  if (bytes.byteLength > maxBodySize) throw drainedRefusal(maxBodySize)
  return bytes
}

/**
 * A refusal leaves the connection usable only if the body was read to its end: HTTP/1.1 clients
 * reuse connections, and unread bytes would be taken for the start of the next request (Express and
 * Koa leave the stream paused, so the next delivery stalls). So a body not yet read is read now:
 * within the limit it is kept (its size goes in the event); past it the body reader discards the
 * rest within the drain bounds (see drain.ts), and a body drained to its end leaves the connection
 * as clean as one read. Where that cannot be done (a bound hit, cut short, a length
 * that cannot be trusted) the answer says `Connection: close`, which Node and the adapters'
 * servers honour by closing once it is sent.
 */
async function afterRefusal(error: WebhookError, reader: BodyReader): Promise<{ refusal: WebhookError; bodyBytes: number | undefined }> {
  let drained = false
  const bodyBytes = await reader.discard().then(
    (body) => body.byteLength,
    (failure: unknown) => {
      drained = wasDrained(failure)
      return undefined
    },
  )
  if (bodyBytes !== undefined || drained) return { refusal: error, bodyBytes }
  const { code, message, headers, paths, hint, cause } = error
  return { refusal: new WebhookError(code, message, { headers: { ...headers, connection: 'close' }, paths, hint, cause }), bodyBytes }
}

function readSource(body: BodySource, limit: number, declaredLength: number | undefined): Promise<Uint8Array> | Uint8Array {
  if (body instanceof Uint8Array) return body
  if (body instanceof ArrayBuffer) return new Uint8Array(body)
  if (typeof body === 'string') return utf8(body)
  if (typeof body === 'function') return body(limit, declaredLength)
  if (body === null || body === undefined) return new Uint8Array(0)
  // Any other reader object (another copy of the core's, in an app that loads two of its builds): read, and checked as a function's is.
  if (!('getReader' in body)) return body.read(limit, declaredLength)
  return readLimited(body, limit, declaredLength)
}

/** Maps a body reader's failure; a reader of the app's own that follows `http-errors` says 413 by status. */
function bodyReadFailure(error: unknown, maxBodySize: number): WebhookError {
  if (error instanceof WebhookError) return error
  const status =
    (error as { status?: unknown; statusCode?: unknown } | null)?.status ?? (error as { statusCode?: unknown } | null)?.statusCode
  if (status === 413) return payloadTooLarge(maxBodySize)
  // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
  return new WebhookError('invalid_body', 'The request body could not be read in full.', { cause: error })
}
