import net from 'node:net'
import { setImmediate } from 'node:timers'
import type { Reply } from './http.ts'

// HTTP/1.1 spoken byte by byte over one socket: what a sender does that `http.request` will not
// (framing a server must refuse, a second request on a connection whose first body was refused),
// and what it sees (whether the connection stays open). Node's `net` only, which Bun and Deno
// provide as well, so the runtime matrix drives their servers with it too.

/** One answer parsed off the wire. */
export interface ParsedResponse extends Reply {
  /** The whole answer has arrived: its head and its body as framed. */
  complete: boolean
  /** How many bytes of the input it took. */
  size: number
}

/**
 * Parses the first HTTP/1.1 answer in `data`, or `undefined` while its head is incomplete. The body
 * is framed by chunked coding or Content-Length; an answer with neither runs until the server closes
 * the connection (RFC 9112 §6.3), so it is complete only once `ended`.
 */
export function parseResponse(data: Buffer, ended = false): ParsedResponse | undefined {
  const end = data.indexOf('\r\n\r\n')
  if (end === -1) return undefined
  const [statusLine = '', ...lines] = data.subarray(0, end).toString('latin1').split('\r\n')
  const status = Number(statusLine.split(' ')[1] ?? 0)
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
  }
  const start = end + 4
  const rest = data.subarray(start)
  // Interim answers, 204 and 304 have no body whatever their headers say (RFC 9112 §6.3).
  if (status < 200 || status === 204 || status === 304) return { status, headers, text: '', complete: true, size: start }
  if (headers['transfer-encoding']?.toLowerCase().includes('chunked')) {
    const body = dechunk(rest)
    if (body === undefined) return { status, headers, text: '', complete: false, size: data.length }
    return { status, headers, text: body.bytes.toString('utf8'), complete: true, size: start + body.size }
  }
  const declared = headers['content-length']
  if (declared === undefined) return { status, headers, text: rest.toString('utf8'), complete: ended, size: data.length }
  const length = Number(declared)
  const body = rest.subarray(0, length)
  return { status, headers, text: body.toString('utf8'), complete: rest.length >= length, size: start + body.length }
}

/** A chunked body's bytes and the size of its coding, or `undefined` until its last chunk has arrived. */
function dechunk(data: Buffer): { bytes: Buffer; size: number } | undefined {
  const parts: Buffer[] = []
  let at = 0
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at)
    if (lineEnd === -1) return undefined
    const size = Number.parseInt(data.subarray(at, lineEnd).toString('latin1'), 16)
    if (size === 0) {
      // The last chunk ends with an empty line, after any trailer lines.
      const end = data.indexOf('\r\n\r\n', lineEnd)
      return end === -1 ? undefined : { bytes: Buffer.concat(parts), size: end + 4 }
    }
    if (data.length < lineEnd + 2 + size + 2) return undefined
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
}

/** An HTTP/1.1 request head, with the header lines exactly as given (repeats and all). */
export function head(method: string, path: string, lines: readonly (readonly [string, string])[]): string {
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`
}

/** `bytes` in chunked coding, one chunk per part, with the last chunk when `last`. */
export function chunked(parts: readonly (string | Uint8Array)[], last = true): Buffer {
  const coded = parts.flatMap((part) => {
    const bytes = typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part)
    return [Buffer.from(`${bytes.length.toString(16)}\r\n`, 'latin1'), bytes, Buffer.from('\r\n', 'latin1')]
  })
  return Buffer.concat(last ? [...coded, Buffer.from('0\r\n\r\n', 'latin1')] : coded)
}

/** Whether an answer tells the client that the server closes the connection after it. */
export function announcesClose(reply: Pick<Reply, 'headers'>): boolean {
  return (reply.headers.connection ?? '')
    .toLowerCase()
    .split(',')
    .some((token) => token.trim() === 'close')
}

/** One client connection, kept open across requests as an HTTP/1.1 sender keeps it. */
export interface Connection {
  /** Writes each part as its own write, waiting while the socket's buffer is full; nothing once the server has closed. */
  write(...parts: readonly (string | Uint8Array)[]): Promise<void>
  /** The next answer on this connection, or `undefined` when none is complete within `ms`. */
  reply(ms?: number): Promise<Reply | undefined>
  /** Whether the server has closed the connection (an end or a reset), waiting at most `ms` for it. */
  closed(ms?: number): Promise<boolean>
  /** Bytes written so far. */
  written(): number
  /** Closes the client's side; safe to call more than once. */
  destroy(): void
}

/** Answers, closes and writes are each bounded by this by default, so that no check can hang. */
export const WIRE_WAIT_MS = 2000

/** How a connection's client behaves. */
export interface ConnectOptions {
  /**
   * Write each request whole before reading anything, as the service's Java sender does: while a
   * `write` runs, the client takes no byte off the socket (its kernel buffer fills, and a server
   * that resets the connection erases an answer the client has not read yet), in writes of
   * `writeSize` bytes; it reads once the last byte is written, or once the server has stopped
   * taking bytes for `WIRE_WAIT_MS`. By default a connection reads as bytes arrive.
   */
  writeFirst?: boolean
  /** With `writeFirst`, the size of each write; default 16 KiB. */
  writeSize?: number
}

/** Opens a connection to a server on 127.0.0.1. */
export function connect(
  port: number,
  host = '127.0.0.1',
  { writeFirst = false, writeSize = 16 * 1024 }: ConnectOptions = {},
): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const take = (chunk: Buffer) => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk])
      changed()
    }
    // Read into a buffer of our own: with one, pausing the socket stops reading from the kernel
    // itself (a paused socket otherwise still fills its stream buffer), as a client that is busy
    // writing does.
    const socket = writeFirst
      ? net.connect({
          port,
          host,
          onread: {
            buffer: Buffer.alloc(64 * 1024),
            callback: (size, buffer) => {
              take(Buffer.from(buffer.subarray(0, size)))
              return true
            },
          },
        })
      : net.connect(port, host)
    if (writeFirst) socket.pause()
    let received: Buffer = Buffer.alloc(0)
    let ended = false
    let written = 0
    const waiting = new Set<() => void>()
    const changed = () => {
      for (const wake of [...waiting]) wake()
    }
    /** Resolves at the next byte or close, or after `ms`, whichever comes first. */
    const nextChange = (ms: number) =>
      new Promise<void>((settle) => {
        const wake = () => {
          clearTimeout(timer)
          waiting.delete(wake)
          settle()
        }
        const timer = setTimeout(wake, ms)
        waiting.add(wake)
      })
    if (!writeFirst) socket.on('data', take)
    const hangUp = () => {
      ended = true
      changed()
    }
    socket.on('end', hangUp)
    socket.on('close', hangUp)
    // A server that closes with bytes of ours unread resets the connection: for the client that
    // is the close itself, and the answer before it has already arrived.
    socket.on('error', hangUp)
    socket.once('error', reject)
    socket.once('connect', () => {
      socket.off('error', reject)
      resolve(connection)
    })

    /** Waits until the socket takes more bytes; false when it has not within `WIRE_WAIT_MS` (a server that stopped reading). */
    const drained = () =>
      new Promise<boolean>((done) => {
        const go = (taken: boolean) => () => {
          clearTimeout(timer)
          socket.off('drain', onDrain)
          socket.off('close', onClose)
          done(taken)
        }
        const onDrain = go(true)
        const onClose = go(false)
        const timer = setTimeout(go(false), WIRE_WAIT_MS)
        socket.once('drain', onDrain)
        socket.once('close', onClose)
      })
    const writeParts = async (parts: readonly (string | Uint8Array)[]) => {
      for (const part of parts) {
        const whole = typeof part === 'string' ? Buffer.from(part, 'utf8') : part
        const size = writeFirst ? writeSize : Math.max(whole.byteLength, 1)
        for (let at = 0; at < whole.byteLength || at === 0; at += size) {
          if (ended || socket.destroyed) return
          const bytes = whole.subarray(at, at + size)
          written += bytes.byteLength
          // A server that stops reading leaves the buffer full: give up on it after a while
          // (writing first, on the rest of the request too, and read what it answered).
          if (!socket.write(bytes) && !(await drained()) && writeFirst) return
          // A sender runs beside the server, not before it: with both in one process (as in
          // tests), a loop of writes the kernel takes at once would otherwise hand the server the
          // whole body before the server runs at all.
          if (writeFirst) await new Promise((resume) => setImmediate(resume))
          if (whole.byteLength === 0) break
        }
      }
    }

    const connection: Connection = {
      async write(...parts) {
        if (!writeFirst) return writeParts(parts)
        socket.pause()
        try {
          await writeParts(parts)
        } finally {
          if (!socket.destroyed) socket.resume()
        }
      },
      async reply(ms = WIRE_WAIT_MS) {
        const deadline = Date.now() + ms
        for (;;) {
          const parsed = parseResponse(received, ended)
          if (parsed?.complete) {
            received = received.subarray(parsed.size)
            return { status: parsed.status, headers: parsed.headers, text: parsed.text }
          }
          const left = deadline - Date.now()
          if (ended || left <= 0) return undefined
          await nextChange(left)
        }
      },
      async closed(ms = WIRE_WAIT_MS) {
        const deadline = Date.now() + ms
        while (!ended) {
          const left = deadline - Date.now()
          if (left <= 0) return false
          await nextChange(left)
        }
        return true
      },
      written: () => written,
      destroy: () => {
        socket.destroy()
      },
    }
  })
}

/**
 * What became of a connection after an answer, by the contract's rule for refusals: the server
 * either keeps it (and the next request on it gets its own answer) or says `Connection: close` and
 * closes it. Anything else breaks a sender that reuses connections.
 */
export type Aftermath =
  | { outcome: 'closed' }
  | { outcome: 'kept'; next: Reply }
  | {
      outcome: 'broken'
      why: 'closed without announcing it' | 'announced a close and kept the connection open' | 'stalled: the next request went unanswered'
    }

/**
 * Follows `first` (the answer just read off `connection`): waits for the announced close, or sends
 * `next` on the same connection and reads its answer, each within `ms`.
 */
export async function aftermath(
  connection: Connection,
  first: Reply,
  next: readonly (string | Uint8Array)[],
  ms = WIRE_WAIT_MS,
): Promise<Aftermath> {
  if (announcesClose(first)) {
    return (await connection.closed(ms))
      ? { outcome: 'closed' }
      : { outcome: 'broken', why: 'announced a close and kept the connection open' }
  }
  await connection.write(...next)
  const reply = await connection.reply(ms)
  if (reply !== undefined) return { outcome: 'kept', next: reply }
  return (await connection.closed(0))
    ? { outcome: 'broken', why: 'closed without announcing it' }
    : { outcome: 'broken', why: 'stalled: the next request went unanswered' }
}

/** What one request of `writeFirstRounds` came to: the answer read (if any), and what became of its connection. */
export interface WriteFirstRound {
  reply: Reply | undefined
  /** Only when the round sent a next request: the connection after the answer, by `aftermath`. */
  after?: Aftermath
}

/**
 * Sends `request` `rounds` times, each on a connection of its own, as a sender that writes its
 * whole request before reading the answer (`connect`'s `writeFirst`), and reads the answer; with
 * `next`, follows each answer with `aftermath` (the announced close, or `next` on the same
 * connection). Each answer is awaited at most `ms`; rounds stop once `budgetMs` has passed, so a
 * server that stalls fails the check rather than hanging it (rounds not run are left out).
 */
export async function writeFirstRounds(
  port: number,
  {
    rounds,
    request,
    next,
    ms = WIRE_WAIT_MS,
    budgetMs = 20_000,
    host = '127.0.0.1',
  }: {
    rounds: number
    request: readonly (string | Uint8Array)[]
    next?: readonly (string | Uint8Array)[]
    ms?: number
    budgetMs?: number
    host?: string
  },
): Promise<WriteFirstRound[]> {
  const deadline = Date.now() + budgetMs
  const results: WriteFirstRound[] = []
  for (let round = 0; round < rounds && Date.now() < deadline; round++) {
    const connection = await connect(port, host, { writeFirst: true })
    try {
      await connection.write(...request)
      const reply = await connection.reply(ms)
      if (reply === undefined || next === undefined) results.push({ reply })
      else results.push({ reply, after: await aftermath(connection, reply, next, ms) })
    } finally {
      connection.destroy()
    }
  }
  return results
}

/** A short account of `writeFirstRounds`' results, for an assertion's message: `20/20 answered 413`, and what failed. */
export function describeRounds(results: readonly WriteFirstRound[], rounds: number): string {
  const statuses = new Map<string, number>()
  for (const { reply, after } of results) {
    const key = `${reply === undefined ? 'no answer' : reply.status}${after === undefined ? '' : `, then ${after.outcome === 'broken' ? after.why : after.outcome === 'kept' ? `kept: ${after.next.status}` : 'closed'}`}`
    statuses.set(key, (statuses.get(key) ?? 0) + 1)
  }
  const run = results.length < rounds ? ` (${rounds - results.length} not run: out of time)` : ''
  return `${[...statuses].map(([key, count]) => `${count}/${rounds} ${key}`).join('; ')}${run}`
}
