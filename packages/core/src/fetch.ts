import { readLimited } from './body.ts'
import { DRAIN_BOUNDS, RECEIPT_BOUNDS, type TimeBounds } from './drain.ts'
import { bodyTooSlow, rawBodyUnavailable } from './errors.ts'
import type { HeaderSource, IncomingRequest } from './request.ts'
import type { WebhookResponse } from './response.ts'

/** How a Fetch-based adapter reads its request, where its framework knows better than the `Request`. */
export interface FetchRequestReading {
  /** The framework's fix for a body read before hookguard saw it, appended to the `raw_body_unavailable` message. */
  howToMount: string
  /** The same headers as `request.headers`, from somewhere cheaper (Hono on Node: the raw header lines). */
  headers?: HeaderSource
  /** Reads the whole body, for a length the headers declare within the limit; default `request.arrayBuffer()`. */
  readAll?: () => Promise<ArrayBuffer>
  /** The bounds in time on reading the body; only the library's own tests pass others. */
  receipt?: TimeBounds
}

/** A Fetch request as the core reads it: the body is always a reader with a limit. */
export interface FetchIncomingRequest extends IncomingRequest {
  body: (limit: number, declaredLength: number | undefined) => Promise<Uint8Array>
}

/**
 * Turns a Fetch `Request` (Hono, Next.js, Bun, Deno, Workers) into the core's request. The body is
 * read once, when the core asks: whole when `Content-Length` declares it within the limit,
 * otherwise streamed, and past the limit drained (within bounds) rather than kept. Never through `clone()`: on Workers a clone
 * buffers the whole body in memory, whatever its size.
 */
export function fromFetchRequest(
  request: Request,
  { howToMount, headers = request.headers, readAll, receipt = RECEIPT_BOUNDS }: FetchRequestReading,
): FetchIncomingRequest {
  return {
    method: request.method,
    url: request.url,
    headers,
    async body(limit, declared) {
      // A body someone else read no longer has the bytes that were signed.
      if (request.bodyUsed) throw rawBodyUnavailable(howToMount)
      // A single, strictly parsed Content-Length without Transfer-Encoding (as the core checked it)
      // bounds the body by the HTTP framing itself, so the whole-body read cannot pass the limit;
      // checked again here, because that read has no limit of its own. It is the fast one: @hono/node-server serves it straight
      // from Node's stream, where touching `request.body` first builds a Web stream (four times the
      // CPU per delivery). Bytes beyond the limit, in process, are refused by the core after the read.
      if (typeof declared === 'number' && declared <= limit) {
        return new Uint8Array(await inTime(readAll === undefined ? request.arrayBuffer() : readAll(), receipt.ms))
      }
      // Asked only here: on @hono/node-server, `request.body` is what builds the Web stream.
      const stream = request.body
      if (stream?.locked === true) throw rawBodyUnavailable(howToMount)
      // Over the limit, declared or as it arrives: refused, once the rest is drained within its bounds.
      return readLimited(stream, limit, declared, DRAIN_BOUNDS, receipt)
    },
  }
}

/**
 * `read`, or `invalid_body` once `ms` have passed: a whole-body read shows no byte before the last,
 * so only the total bound applies. A read given up on is left to end with its connection, which
 * the refusal's `Connection: close` closes.
 */
function inTime<T>(read: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(bodyTooSlow()), ms)
  })
  read.catch(() => {})
  return Promise.race([read, late]).finally(() => clearTimeout(timer))
}

/** The core's answer as a Fetch `Response`: status, headers (`WWW-Authenticate`, `Connection: close`…) and JSON body. */
export function toFetchResponse({ status, headers, body }: WebhookResponse): Response {
  return new Response(body, { status, headers })
}
