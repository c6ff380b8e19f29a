import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { readNodeBody } from '@hookguard/core/node'

/**
 * What a receiving address (the inspector's, `hookguard listen`'s) takes in at once: open
 * connections, and the bytes of bodies it may hold until they are done with. Each is bounded, so
 * that senders that never finish their uploads (or never stop opening connections) cannot grow the
 * process's memory; past a bound a request is answered 503 (`inspector_busy` from the inspector)
 * with `Connection: close` and `Retry-After`, before anything of it is read, judged or forwarded. A connection that has no request in progress
 * (none sent yet, or kept alive after one) holds no slot for long: it has `headTimeoutMs` to send a
 * request's head, and at twice the cap a new connection takes the place of the oldest of them.
 */

/** The code the inspector answers past a bound. */
export const INSPECTOR_BUSY = 'inspector_busy'

/** Who answers past a bound, and with which code: the inspector, or `hookguard listen`. */
export interface BusyAnswer {
  code: string
  /** The subject of the answer's sentence: "The inspector". */
  subject: string
}

const INSPECTOR: BusyAnswer = { code: INSPECTOR_BUSY, subject: 'The inspector' }

/** How long a connection may go without a request in progress: to send its first head, or its next. */
export const HEAD_TIMEOUT_MS = 10_000

export interface AdmissionLimits {
  maxConnections: number
  maxInFlightBytes: number
  /** The most a request's body can hold: the size limit and one byte to tell it went over. */
  maxBodySize: number
  /** Defaults to {@link HEAD_TIMEOUT_MS}. */
  headTimeoutMs?: number
  /** Defaults to the inspector's 503 `inspector_busy`. */
  busyAnswer?: BusyAnswer
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
  /** Tells the refusals not told yet now, rather than when their interval ends: at shutdown. */
  flush(): void
}

/** How often refusals are told: a flood must not become one line per request. */
export const REFUSED_WARNING_EVERY_MS = 10_000

export function createAdmission(
  server: Server,
  { maxConnections, maxInFlightBytes, maxBodySize, headTimeoutMs = HEAD_TIMEOUT_MS, busyAnswer = INSPECTOR }: AdmissionLimits,
  /**
   * Told, at most every {@link REFUSED_WARNING_EVERY_MS}, a sentence that counts the requests
   * refused since it was last told (answered 503, and answered 400 or 431 for not being HTTP);
   * every refusal is counted in one, at the latest when the interval ends or at {@link Admission.flush}.
   */
  onRefused: (sentence: string) => void = () => {},
): Admission {
  // Oldest first (a Map keeps the order of insertion); each with its head deadline while
  // it has no request in progress.
  const open = new Map<Socket, NodeJS.Timeout | undefined>()
  // Each connection with a request in progress, and how many: pipelined requests overlap, the next
  // one's head read before the answer to the one before it is out.
  const serving = new Map<Socket, number>()
  let inFlight = 0
  let busyCount = 0
  let unparsableCount = 0
  let toldAt = Number.NEGATIVE_INFINITY
  let later: NodeJS.Timeout | undefined
  const tell = () => {
    clearTimeout(later)
    later = undefined
    if (busyCount + unparsableCount === 0) return
    toldAt = Date.now()
    onRefused(refusedSentence(busyCount, unparsableCount, busyAnswer.code))
    busyCount = 0
    unparsableCount = 0
  }
  // The first refusal is told at once; those that follow within the interval, when it ends.
  const refused = () => {
    const wait = toldAt + REFUSED_WARNING_EVERY_MS - Date.now()
    if (wait <= 0) tell()
    else if (later === undefined) {
      later = setTimeout(tell, wait)
      later.unref()
    }
  }
  const awaitHead = (socket: Socket) => {
    clearTimeout(open.get(socket))
    const deadline = setTimeout(() => socket.destroy(), headTimeoutMs)
    deadline.unref()
    open.set(socket, deadline)
  }
  const forget = (socket: Socket) => {
    clearTimeout(open.get(socket))
    open.delete(socket)
    serving.delete(socket)
  }
  server.on('connection', (socket: Socket) => {
    // Past twice the cap (room for the ones over the cap to read their 503, and a bound on
    // sockets), a new connection takes the place of the oldest that has no request in progress:
    // connections that never send cannot shut out one that does. With none such, it is closed.
    if (open.size >= maxConnections * 2) {
      let idle: Socket | undefined
      for (const candidate of open.keys()) {
        if (!serving.has(candidate)) {
          idle = candidate
          break
        }
      }
      if (idle === undefined) {
        socket.destroy()
        return
      }
      forget(idle)
      idle.destroy()
    }
    awaitHead(socket)
    socket.once('close', () => forget(socket))
  })
  // Before the capture handler, so that it counts this request among those in progress.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket
    if (!open.has(socket)) return
    clearTimeout(open.get(socket))
    open.set(socket, undefined)
    serving.set(socket, (serving.get(socket) ?? 0) + 1)
    res.once('close', () => {
      if (!open.has(socket)) return
      // The connection waits for a head only once no request of it is left in progress: the answer
      // to one before a pipelined request must not start the clock on the one still arriving.
      const left = (serving.get(socket) ?? 1) - 1
      if (left > 0) {
        serving.set(socket, left)
        return
      }
      serving.delete(socket)
      awaitHead(socket)
    })
  })
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    unparsable(error, socket, () => {
      unparsableCount++
      refused()
    })
  })

  return {
    admit(req, res) {
      const declared = req.headers['content-length']
      const length = declared === undefined ? (req.headers['transfer-encoding'] === undefined ? 0 : maxBodySize + 1) : Number(declared)
      const reserve = Math.min(Number.isFinite(length) ? length : maxBodySize + 1, maxBodySize + 1)
      const tooMany = serving.size > maxConnections
      if (tooMany || inFlight + reserve > maxInFlightBytes) {
        busyCount++
        refused()
        busy(req, res, busyAnswer, tooMany ? 'connections' : 'bodies')
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
    flush: tell,
  }
}

function refusedSentence(busy: number, unparsable: number, code: string): string {
  const requests = (count: number) => `${count} ${count === 1 ? 'request' : 'requests'}`
  return [
    busy > 0 && `${requests(busy)} answered 503 ${code} (over the connection cap or the bytes of bodies in flight)`,
    unparsable > 0 && `${requests(unparsable)} answered 400 invalid_body or 431 headers_too_large (not parsable as HTTP)`,
  ]
    .filter(Boolean)
    .join('; ')
}

/**
 * A request Node's parser refuses (a control byte in its path, bare line feeds, a folded header,
 * `Content-Length` with `Transfer-Encoding`, two lengths that differ): answered 400 `invalid_body`
 * as the contract says, never with anything of the request, and its connection closed. It is not
 * recorded: nothing of it was parsed to make a record of. A connection that is gone or timed out is
 * closed without a word: a 400 there would go nowhere.
 */
function unparsable(error: NodeJS.ErrnoException, socket: Socket, counted: () => void): void {
  if (error.code === 'ECONNRESET' || error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || !socket.writable) {
    socket.destroy()
    return
  }
  const answering = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
  if (answering != null) {
    // The request being answered broke off (its sender closed mid-body): it is recorded as such.
    if (!answering.req.complete) {
      socket.destroy()
      return
    }
    // Pipelined after a whole request still being answered: that answer goes first, then this one.
    answering.once('close', () => (answering.writableFinished ? unparsable(error, socket, counted) : socket.destroy()))
    return
  }
  counted()
  // Headers over Node's limit keep the status Node gives them (RFC 6585 §5); anything else is a body
  // the contract calls invalid.
  const overflow = error.code === 'HPE_HEADER_OVERFLOW'
  const body = overflow
    ? JSON.stringify({ error: 'headers_too_large', message: 'The request headers are larger than the inspector reads.' })
    : JSON.stringify({ error: 'invalid_body', message: 'The request could not be parsed as HTTP.' })
  socket.end(
    `HTTP/1.1 ${overflow ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      'Cache-Control: no-store\r\n' +
      'Connection: close\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  )
  // A peer that never reads must not keep the socket: it is closed once the answer is flushed, or soon.
  setTimeout(() => socket.destroy(), 1_000).unref()
}

/**
 * 503. The body is read and dropped first, within the core's drain bounds (nothing of it held),
 * as every hookguard receiver does before it refuses: a sender that writes its whole body before
 * reading (the service's does) then reads the answer rather than a reset (RFC 9112 §9.6). The
 * connection is closed after the answer either way: the inspector is short of room.
 */
function busy(req: IncomingMessage, res: ServerResponse, { code, subject }: BusyAnswer, what: 'connections' | 'bodies'): void {
  const message =
    what === 'connections'
      ? `${subject} has too many connections open; retry shortly.`
      : `${subject} holds too many bodies still arriving; retry shortly.`
  const answer = () => {
    if (res.headersSent) return
    res
      .writeHead(503, {
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-store',
        'retry-after': '1',
        connection: 'close',
      })
      .end(JSON.stringify({ error: code, message }))
  }
  // A limit of 0: any byte is past it, and the rest is drained within the bounds.
  readNodeBody(req, 0, '').then(answer, answer)
}
