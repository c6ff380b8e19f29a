import { once } from 'node:events'
import http, { type RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setImmediate as nextTurn } from 'node:timers/promises'

import type { Outgoing, Reply } from './exchange.ts'

export type { Outgoing, Reply }

export interface Target {
  send(request: Outgoing): Promise<Reply>
  close(): Promise<void>
}

/** Serves `listener` on 127.0.0.1, on a port the system picks. */
export async function listen(listener: RequestListener): Promise<Target> {
  const server = http.createServer(listener)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    send: (request) => sendTo(port, request),
    async close() {
      server.closeAllConnections()
      server.close()
      await once(server, 'close')
    },
  }
}

/** Sends one request over a fresh connection, so that no test shares a socket with another. */
export function sendTo(port: number, { method = 'POST', path, headers = {}, body, stream }: Outgoing): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false })
    let answered = false
    let streamedAll: boolean | undefined
    let sent = 0
    req.on('error', (error) => {
      // The server may drop a connection whose body it refused; only its answer matters then.
      if (!answered) reject(error)
    })
    req.on('response', (res) => {
      answered = true
      if (stream !== undefined) streamedAll = sent === stream.length
      readReply(res).then((reply) => resolve({ ...reply, streamedAll }), reject)
    })
    if (stream === undefined) {
      req.end(body)
      return
    }
    void (async () => {
      for (; sent < stream.length && !answered && !req.destroyed; sent++) {
        if (!req.write(stream[sent] as Uint8Array)) await Promise.race([once(req, 'drain'), once(req, 'close')])
        await nextTurn()
      }
      if (!req.destroyed) req.end()
    })().catch(reject)
  })
}

/** Reads a Node client's answer to the end, with repeated headers joined as fetch joins them. */
export function readReply(res: http.IncomingMessage): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    res.on('data', (chunk: Buffer) => chunks.push(chunk))
    res.on('error', reject)
    res.on('end', () => {
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
      }
      resolve({ status: res.statusCode ?? 0, headers, text: Buffer.concat(chunks).toString('utf8') })
    })
  })
}

export { sendToFetch } from './fetch.ts'
