import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { readNodeBody } from '@hookguard/core/node'

/**
 * What the receiving address takes in at once: open connections, and the bytes of bodies it may
 * hold until their records are complete. Each is bounded, so that senders that never finish
 * their uploads (or never stop opening connections) cannot grow the inspector's memory; past a
 * bound a request is answered 503 `inspector_busy` with `Connection: close` and `Retry-After`,
 * before anything of it is read, judged or forwarded.
 */

/** The code answered past a bound. */
export const INSPECTOR_BUSY = 'inspector_busy'

export interface AdmissionLimits {
  maxConnections: number
  maxInFlightBytes: number
  /** The most a request's body can hold: the size limit and one byte to tell it went over. */
  maxBodySize: number
}

export interface Admission {
  /**
   * Reserves what this request may hold: its declared length (up to the size limit), or the size
   * limit for a body of unknown length. Returns the release, or `undefined` when the request was
   * answered 503 (its connection closing in stages).
   */
  admit(req: IncomingMessage, res: ServerResponse): (() => void) | undefined
  /** Bytes reserved now. */
  readonly inFlightBytes: number
  /** Requests refused since the last warning. */
  refused(): number
}

export function createAdmission(server: Server, { maxConnections, maxInFlightBytes, maxBodySize }: AdmissionLimits): Admission {
  let connections = 0
  let inFlight = 0
  let refusedCount = 0
  server.on('connection', (socket: Socket) => {
    connections++
    socket.once('close', () => connections--)
  })
  // Past twice the cap, connections are closed as they come, before any request: room enough for
  // the ones over the cap to read their 503, and a bound on sockets too.
  server.maxConnections = maxConnections * 2

  return {
    admit(req, res) {
      const declared = req.headers['content-length']
      const length = declared === undefined ? (req.headers['transfer-encoding'] === undefined ? 0 : maxBodySize + 1) : Number(declared)
      const reserve = Math.min(Number.isFinite(length) ? length : maxBodySize + 1, maxBodySize + 1)
      if (connections > maxConnections || inFlight + reserve > maxInFlightBytes) {
        refusedCount++
        busy(req, res, connections > maxConnections ? 'connections' : 'bodies')
        return undefined
      }
      inFlight += reserve
      let released = false
      return () => {
        if (released) return
        released = true
        inFlight -= reserve
      }
    },
    get inFlightBytes() {
      return inFlight
    },
    refused() {
      const count = refusedCount
      refusedCount = 0
      return count
    },
  }
}

/**
 * 503. The body is read and dropped first, within the core's drain bounds (nothing of it held),
 * as every hookguard receiver does before it refuses: a sender that writes its whole body before
 * reading (the service's does) then reads the answer rather than a reset (RFC 9112 §9.6). The
 * connection is closed after the answer either way: the inspector is short of room.
 */
function busy(req: IncomingMessage, res: ServerResponse, what: 'connections' | 'bodies'): void {
  const message =
    what === 'connections'
      ? 'The inspector has too many connections open; retry shortly.'
      : 'The inspector holds too many bodies still arriving; retry shortly.'
  const answer = () => {
    if (res.headersSent) return
    res
      .writeHead(503, {
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-store',
        'retry-after': '1',
        connection: 'close',
      })
      .end(JSON.stringify({ error: INSPECTOR_BUSY, message }))
  }
  // A limit of 0: any byte is past it, and the rest is drained within the bounds.
  readNodeBody(req, 0, '').then(answer, answer)
}
