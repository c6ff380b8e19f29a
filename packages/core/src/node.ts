/**
 * `@hookguard/core/node`: what every Node adapter (Express, Koa, and those to come) needs of a
 * Node `IncomingMessage`, written once: its headers as the core reads them best, and its body
 * read within a limit. Framework-free; no verification here.
 *
 * Its export has a Web build beside the Node one, so that an adapter that runs everywhere (Hono)
 * can import it without the core's Node build landing in a Worker's bundle: nothing here runs
 * until called, and such an adapter calls it only where a Node request (and Node's `Buffer`) exists.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { declaredBodyLength } from './body.ts'
import { BodyBytes } from './body-bytes.ts'
import { watchBody } from './body-watch.ts'
import { DRAIN_BOUNDS, type DrainBounds, drainedRefusal, RECEIPT_BOUNDS, type TimeBounds, wasDrained } from './drain.ts'
import { bodyTooSlow, payloadTooLarge, rawBodyUnavailable, WebhookError } from './errors.ts'
import { type BodySource, type HeaderSource, LimitedBodyReader } from './request.ts'

/**
 * The headers of a Node request as the core reads them best: its `rawHeaders`, which keep every
 * line of a repeated header (`req.headers` keeps only the first `Authorization` or
 * `Content-Type`, where Fetch joins them all). Reading them in place costs nothing up front, where
 * `headersDistinct` builds an object of arrays per request. A stand-in request without them (a
 * test double) falls back to `headers`.
 */
export function nodeRequestHeaders(req: {
  rawHeaders?: readonly string[]
  headers: Record<string, string | string[] | undefined>
}): HeaderSource {
  return req.rawHeaders !== undefined && req.rawHeaders.length > 0 ? req.rawHeaders : req.headers
}

/**
 * Whether something before the adapter read the body: body-parser flags a request it read with
 * `_body`; any other reader leaves the stream read or ended. (A parser that skipped a content
 * type it does not parse may set a body yet leave the stream unread: the stream is what counts.)
 */
export function nodeBodyConsumed(req: IncomingMessage): boolean {
  return (req as { _body?: unknown })._body === true || req.readableEnded || req.readableDidRead
}

/**
 * A Node request's body as an adapter hands it to the core (`IncomingRequest.body`): read by
 * {@link readNodeBody} once the headers have passed, with the limit and the `Content-Length` the
 * core checked. The core takes its bytes as they come, where it checks a function's again.
 * `howToMount` ends the refusal's message when something read the body first.
 */
export function nodeBody(req: IncomingMessage, howToMount: string): BodySource {
  return new NodeBody(req, howToMount)
}

class NodeBody extends LimitedBodyReader {
  readonly #req: IncomingMessage
  readonly #howToMount: string

  constructor(req: IncomingMessage, howToMount: string) {
    super()
    this.#req = req
    this.#howToMount = howToMount
  }

  read(limit: number, declaredLength: number | undefined): Promise<Buffer> {
    return readNodeBody(this.#req, limit, this.#howToMount, declaredLength)
  }
}

/**
 * Reads a Node request's body, refusing with `payload_too_large` once more than `limit` bytes
 * arrive (or from the start, when `declared` is over it), with `invalid_body` when the client goes
 * away or sends another length than it declared, and with `raw_body_unavailable` (its message
 * ending in `howToMount`) when something read it first. `declared` is the `Content-Length` the
 * core checked, passed on by the adapter's body reader
 * (`(limit, declared) => readNodeBody(req, limit, howToMount, declared)`); read from the headers
 * when not given.
 *
 * Past the limit nothing more is kept: the rest of the body is read and discarded within the drain
 * bounds (`DRAIN_MAX_BYTES`, `DRAIN_MAX_MS`, `DRAIN_IDLE_MS`), so that a sender that writes its
 * whole body before reading the answer gets it (a server that closes with the sender's bytes
 * unread resets the connection, and the reset erases the answer), and the connection stays usable.
 * Past a bound, or when the client goes away, the request is paused, the sender is cut off, and
 * the core's answer says `Connection: close`. Before that, within the limit, a body that goes
 * `BODY_IDLE_MS` without a byte, or has not ended `BODY_MAX_MS` after reading began, is refused
 * as `invalid_body` in the same way. `bounds` and `receipt` are for the library's own tests.
 */
export function readNodeBody(
  req: IncomingMessage,
  limit: number,
  howToMount: string,
  declared: number | undefined | 'invalid' = declaredBodyLength(nodeRequestHeaders(req)),
  bounds: DrainBounds = DRAIN_BOUNDS,
  receipt: TimeBounds = RECEIPT_BOUNDS,
): Promise<Buffer> {
  if (nodeBodyConsumed(req)) return Promise.reject(rawBodyUnavailable(howToMount))
  // A client gone before the body is read (while an async resolver or Basic `verify` ran): its
  // request was destroyed, and no byte or event will come; waiting for the idle bound held it for nothing.
  if (req.destroyed) return Promise.reject(incomplete())
  return new Promise((resolve, reject) => {
    const kept = new BodyBytes<Buffer>(allocateBuffer, joinBuffers)
    let size = 0
    // Once refused: what has been discarded; the watch is over the receipt's bounds until then, the drain's after.
    let refused = false
    let discarded = 0
    const finish = (error: WebhookError | undefined) => {
      watch.cancel()
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onGone)
      req.off('close', onGone)
      if (error === undefined) resolve(kept.bytes())
      else {
        // Unless drained to its end: stop taking bytes. The rest stays on the connection, which the answer closes.
        if (!wasDrained(error)) req.pause()
        reject(error)
      }
    }
    let watch = watchBody(receipt, () => finish(bodyTooSlow()))
    const refuse = () => {
      kept.clear()
      refused = true
      watch.cancel()
      watch = watchBody(bounds, () => finish(payloadTooLarge(limit)))
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (refused) {
        discarded += chunk.length
        if (discarded > bounds.bytes) finish(payloadTooLarge(limit))
        else watch.arrived()
      } else if (size > limit) refuse()
      else {
        kept.add(chunk)
        watch.arrived()
      }
    }
    const onEnd = () => {
      if (refused) finish(drainedRefusal(limit))
      // Node frames by Content-Length, so a mismatch means a client that lies; say so.
      else if (typeof declared === 'number' && declared !== size) finish(incomplete())
      else finish(undefined)
    }
    // A client that goes away mid-drain takes the answer with it; its refusal stays a 413.
    const onGone = () => finish(refused ? payloadTooLarge(limit) : incomplete())
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onGone)
    req.on('close', onGone)
    if (typeof declared === 'number' && declared > limit) refuse()
  })
}

const allocateBuffer = (length: number) => Buffer.allocUnsafe(length)
const joinBuffers = (pieces: readonly Uint8Array[], size: number) => Buffer.concat(pieces, size)

function incomplete(): WebhookError {
  return new WebhookError('invalid_body', 'The request body could not be read in full.')
}

/**
 * With `dedupe`: settles a delivery's claim by the app's answer: handled when it answered below
 * 400, released (so the service's retry runs) when it answered an error. A sender that goes away
 * says nothing of the handler, which runs on: a closed connection alone never settles, or a retry
 * sent meanwhile would run the handler a second time, beside the first. The answer the app writes
 * after the close (`res.end`) still settles; an app that never answers leaves the claim to expire
 * with `processingTtl`. Returns a function for an adapter that learns the app's verdict another way
 * (Koa, which writes nothing to a closed connection): it counts only once the connection is gone.
 */
export function settleWhenAnswered(res: ServerResponse, settle: (handled: boolean) => Promise<void>): (handled: boolean) => void {
  let settled = false
  const once = (handled: boolean) => {
    if (settled) return
    settled = true
    res.off('finish', finished)
    res.off('close', closed)
    void settle(handled)
  }
  const finished = () => once(res.statusCode < 400)
  const closed = () => {
    // 'finish' comes before 'close' when the answer was sent; the app answered if it ended it.
    if (res.writableEnded) return once(res.statusCode < 400)
    const end = res.end
    res.end = function endAfterClose(this: ServerResponse, ...args: Parameters<ServerResponse['end']>) {
      res.end = end
      once(res.statusCode < 400)
      return end.apply(this, args)
    } as ServerResponse['end']
  }
  res.once('finish', finished)
  res.once('close', closed)
  // A sender can go away before the adapter gets here (while the body was verified and the claim
  // made, on a loaded server): its 'close' has come and gone, and the answer still settles.
  if (res.destroyed) {
    res.off('close', closed)
    closed()
  }
  return (handled) => {
    if (res.destroyed && !res.writableEnded) once(handled)
  }
}
