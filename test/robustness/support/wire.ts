import { once } from 'node:events'
import http from 'node:http'
import net from 'node:net'
import { type Reply, readReply } from '@hookguard/testkit/http'
import { parseResponse } from '@hookguard/testkit/wire'

export { head } from '@hookguard/testkit/wire'

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
      const { status = 0, headers = {}, text = '' } = parseResponse(Buffer.concat(received), true) ?? {}
      resolve({ status, headers, text, closedByServer })
    }
    const timer = setTimeout(finish, waitMs)
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk)
      if (parseResponse(Buffer.concat(received))?.complete) finish()
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
