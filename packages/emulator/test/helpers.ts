import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import { createReceiver, type WebhookOptions } from '@hookguard/core'
import signatures from '@hookguard/testkit/signatures.json' with { type: 'json' }
import type { CliIo } from '../src/cli/run.ts'

export interface Vector {
  name: string
  secret: string
  body: string
  bodyBase64: string
  signature: string
  valid: boolean
  why: string
}

interface Fixtures {
  vectors: Vector[]
  basic: { cases: { username: string; password: string; header: string }[] }
}

export const fixtures: Fixtures = signatures

/** The vectors the service itself produced and a receiver accepts: valid, and no `/` variant. */
export const serviceVectors = fixtures.vectors.filter((v) => v.valid && !v.name.includes('/'))

export const vector = (name: string): Vector => {
  const found = fixtures.vectors.find((v) => v.name === name)
  if (found === undefined) throw new Error(`no vector ${name}`)
  return found
}

/** A request as the test server received it. */
export interface Captured {
  method: string
  /** Path and query, as sent. */
  url: string
  headers: IncomingHttpHeaders
  body: Uint8Array
}

export interface Answer {
  status: number
  headers?: Record<string, string>
  body?: string
}

export interface TestServer {
  url: string
  requests: Captured[]
  close(): Promise<void>
}

const open = new Set<Server>()

/** A node:http server on 127.0.0.1, an ephemeral port; every one is closed by {@link closeServers}. */
export async function startServer(handler: (req: Captured) => Answer | Promise<Answer> = () => ({ status: 204 })): Promise<TestServer> {
  const requests: Captured[] = []
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const captured: Captured = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: new Uint8Array(Buffer.concat(chunks)),
    }
    requests.push(captured)
    try {
      const answer = await handler(captured)
      res.writeHead(answer.status, answer.headers).end(answer.body)
    } catch (error) {
      res.writeHead(500).end(String(error))
    }
  })
  open.add(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, requests, close: () => closeServer(server) }
}

function closeServer(server: Server): Promise<void> {
  open.delete(server)
  return new Promise((resolve) => {
    server.close(() => resolve())
    server.closeAllConnections()
  })
}

export async function closeServers(): Promise<void> {
  await Promise.all([...open].map(closeServer))
}

/**
 * A receiver as an app would run it: the core's `createReceiver`, its token address at `/token`,
 * and every other path the message receiving address, answering 200 with what it verified.
 */
export function receiverServer(options: WebhookOptions): Promise<TestServer> {
  const receiver = createReceiver(options)
  return startServer(async ({ method, url, headers, body }) => {
    const incoming = { method, url, headers, body }
    if (new URL(url, 'http://x').pathname === '/token') return receiver.token(incoming)
    const result = await receiver.verify(incoming)
    if (!result.ok) return result.response
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ payload: result.delivery.payload }) }
  })
}

export const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

export interface CapturedIo {
  io: CliIo
  stdout(): string
  stderr(): string
  /** Resolves the stdout text once `pattern` appears in it. */
  waitForStdout(pattern: RegExp): Promise<RegExpMatchArray>
}

/** In-process I/O for `run`: buffers for stdout and stderr, an environment, and optionally stdin. */
export function captureIo(
  init: { env?: Record<string, string>; stdin?: string | Uint8Array; tty?: boolean; signal?: AbortSignal } = {},
): CapturedIo {
  let out = ''
  let err = ''
  const waiters: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void }[] = []
  const io: CliIo = {
    stdout: {
      isTTY: init.tty ?? false,
      write(chunk: string) {
        out += chunk
        for (const waiter of [...waiters]) {
          const match = out.match(waiter.pattern)
          if (match) {
            waiters.splice(waiters.indexOf(waiter), 1)
            waiter.resolve(match)
          }
        }
      },
    },
    stderr: {
      isTTY: init.tty ?? false,
      write(chunk: string) {
        err += chunk
      },
    },
    env: init.env ?? {},
    signal: init.signal,
  }
  if (init.stdin !== undefined) io.stdin = Object.assign(Readable.from([init.stdin]), { isTTY: false })
  return {
    io,
    stdout: () => out,
    stderr: () => err,
    waitForStdout: (pattern) => {
      const match = out.match(pattern)
      return match ? Promise.resolve(match) : new Promise((resolve) => waiters.push({ pattern, resolve }))
    },
  }
}

/** What `promise` rejects with; fails the test if it resolves. */
export async function rejection<E = Error>(promise: Promise<unknown>): Promise<E> {
  try {
    await promise
  } catch (error) {
    return error as E
  }
  throw new Error('expected a rejection, but the promise resolved')
}
