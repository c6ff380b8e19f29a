import { once } from 'node:events'
import http from 'node:http'
import net from 'node:net'
import { type Reply, readReply } from '../../support/http.ts'

/** What came back on a socket: the first answer, if any, and whether the server closed the connection. */
export interface RawReply extends Reply {
  /** 0 when no answer arrived. */
  status: number
  closedByServer: boolean
}

export interface RawExchange {
  /** Written in order, each as its own write. */
  bytes: readonly (string | Uint8Array)[]
  /**
   * What the client does once everything is written: `'wait'` keeps the connection open for an
   * answer, `'end'` half-closes it (the sender is done), `'destroy'` walks away without a word.
   */
  afterwards: 'wait' | 'end' | 'destroy'
  /** How long to wait for an answer before giving up (and destroying the socket); default 2 s. */
  waitMs?: number
}

/**
 * Speaks HTTP/1.1 byte by byte on a fresh connection, for what `http.request` refuses to send:
 * malformed framing, a Content-Length that lies, a client that leaves mid-body.
 */
export function exchange(port: number, { bytes, afterwards, waitMs = 2000 }: RawExchange): Promise<RawReply> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    const received: Buffer[] = []
    let closedByServer = false
    let settled = false
    const finish = () => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ ...parseFirstResponse(Buffer.concat(received)), closedByServer })
    }
    const timer = setTimeout(finish, waitMs)
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk)
      if (parseFirstResponse(Buffer.concat(received)).complete) finish()
    })
    socket.on('end', () => {
      closedByServer = true
      finish()
    })
    // A reset after the server answered and hung up is expected; the answer is what counts.
    socket.on('error', finish)
    socket.on('close', finish)
    socket.once('connect', async () => {
      for (const part of bytes) {
        if (!socket.write(part)) await once(socket, 'drain')
      }
      if (afterwards === 'end') socket.end()
      if (afterwards === 'destroy') {
        // Long enough for the server to have started reading the body.
        setTimeout(finish, 50)
      }
    })
  })
}

function parseFirstResponse(data: Buffer): Omit<RawReply, 'closedByServer'> & { complete: boolean } {
  const text = data.toString('latin1')
  const end = text.indexOf('\r\n\r\n')
  if (end === -1) return { status: 0, headers: {}, text: '', complete: false }
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n')
  const status = Number(statusLine.split(' ')[1] ?? 0)
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
  }
  const rest = data.subarray(end + 4)
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    const body = dechunk(rest)
    return { status, headers, text: body?.toString('utf8') ?? '', complete: body !== undefined }
  }
  const length = Number(headers['content-length'] ?? 0)
  return { status, headers, text: rest.subarray(0, length).toString('utf8'), complete: rest.length >= length }
}

function dechunk(data: Buffer): Buffer | undefined {
  const parts: Buffer[] = []
  let at = 0
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at)
    if (lineEnd === -1) return undefined
    const size = Number.parseInt(data.subarray(at, lineEnd).toString('latin1'), 16)
    if (size === 0) return Buffer.concat(parts)
    if (data.length < lineEnd + 2 + size + 2) return undefined
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
}

/** An HTTP/1.1 request head, with the header lines exactly as given (repeats and all). */
export function head(method: string, path: string, lines: readonly (readonly [string, string])[]): string {
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`
}

/**
 * `http.request` with a header repeated on its own lines (Node's client writes one line per array
 * element), for how Node's server then folds them into `req.headers`.
 */
export function sendWithLines(
  port: number,
  { path, headers, body }: { path: string; headers: Record<string, string | string[]>; body: string },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path, headers, agent: false }, (res) => {
      readReply(res).then(resolve, reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}
