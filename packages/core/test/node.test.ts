import { EventEmitter, once } from 'node:events'
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PassThrough } from 'node:stream'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createReceiver, DRAIN_IDLE_MS, DRAIN_MAX_BYTES, WebhookError } from '@hookguard/core'
import { nodeBody, nodeBodyConsumed, nodeRequestHeaders, readNodeBody, settleWhenAnswered } from '@hookguard/core/node'
import { digitText, writeOneByteChunks } from '@hookguard/testkit/chunks'
import { afterEach, describe, expect, it } from 'vitest'
import { wasDrained } from '../src/drain.ts'

const HOW_TO_MOUNT = 'Mount the webhook before any body parser.'
const MIB = 1024 * 1024

/**
 * A Node request as the core sees it: a readable stream with headers. `chunks` are written one by
 * one, then the stream ends unless `end` is false.
 */
function nodeRequest(options: { chunks?: string[]; headers?: Record<string, string>; end?: boolean } = {}) {
  const stream = new PassThrough()
  const headers = options.headers ?? {}
  const rawHeaders = Object.entries(headers).flat()
  const req = Object.assign(stream, { headers, rawHeaders }) as unknown as IncomingMessage
  queueMicrotask(() => {
    for (const chunk of options.chunks ?? []) stream.write(Buffer.from(chunk))
    if (options.end !== false) stream.end()
  })
  return { req, stream }
}

/** Writes `size`-byte chunks into `stream` until its reader stops taking them (or `most` are written); how many went in. */
async function writeUntilPaused(stream: PassThrough, size: number, most: number): Promise<number> {
  const chunk = Buffer.alloc(size, 0x20)
  let written = 0
  while (written < most && !stream.isPaused()) {
    written++
    if (!stream.write(chunk)) {
      const drained = once(stream, 'drain').then(() => true)
      const paused = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 200))
      if (!(await Promise.race([drained, paused]))) break
    }
  }
  return written
}

async function refusal(promise: Promise<unknown>): Promise<WebhookError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  expect(error).toBeInstanceOf(WebhookError)
  return error as WebhookError
}

describe('nodeRequestHeaders', () => {
  it('reads the raw header lines, which keep every line of a repeated header', () => {
    const rawHeaders = ['Authorization', 'Basic a', 'Authorization', 'Basic b']
    expect(nodeRequestHeaders({ rawHeaders, headers: { authorization: 'Basic a' } })).toBe(rawHeaders)
  })

  it('falls back to the header object of a request without raw lines', () => {
    const headers = { 'content-type': 'application/json' }
    expect(nodeRequestHeaders({ headers })).toBe(headers)
    expect(nodeRequestHeaders({ rawHeaders: [], headers })).toBe(headers)
  })
})

describe('nodeBodyConsumed', () => {
  const fresh = () => nodeRequest({ end: false }).req

  it('says an untouched request still has its body', () => {
    expect(nodeBodyConsumed(fresh())).toBe(false)
  })

  it('says body-parser read a request it flagged with `_body`', () => {
    const req = Object.assign(fresh(), { _body: true })
    expect(nodeBodyConsumed(req)).toBe(true)
    // A parser that set a body without the flag did not necessarily read the stream.
    expect(nodeBodyConsumed(Object.assign(fresh(), { _body: 'yes' }))).toBe(false)
  })

  it('says a stream another reader started is consumed', () => {
    const { req, stream } = nodeRequest({ chunks: ['{}'], end: false })
    stream.on('data', () => {})
    return new Promise<void>((done) => {
      stream.once('data', () => {
        expect(req.readableEnded).toBe(false)
        expect(nodeBodyConsumed(req)).toBe(true)
        done()
      })
    })
  })

  it('says an ended stream is consumed', async () => {
    const { req, stream } = nodeRequest({ chunks: [] })
    stream.resume()
    await new Promise((ended) => stream.once('end', ended))
    expect(nodeBodyConsumed(req)).toBe(true)
  })

  it('says an ended stream is consumed on a stream that does not track reads', () => {
    // `readableDidRead` is recent (Node 16.7); a stand-in request may only say it ended.
    const req = { readableEnded: true, readableDidRead: undefined } as unknown as IncomingMessage
    expect(nodeBodyConsumed(req)).toBe(true)
  })
})

describe('readNodeBody', () => {
  it('joins the chunks of a body in order', async () => {
    const { req } = nodeRequest({ chunks: ['{"a":', '1,', '"b":2}'] })
    expect((await readNodeBody(req, 64, HOW_TO_MOUNT)).toString()).toBe('{"a":1,"b":2}')
  })

  it('hands back a body of one chunk without copying it, and no chunk as an empty body', async () => {
    const { req, stream } = nodeRequest({ end: false })
    const chunk = Buffer.from('{}')
    stream.end(chunk)
    expect(await readNodeBody(req, 64, HOW_TO_MOUNT)).toBe(chunk)
    const empty = await readNodeBody(nodeRequest().req, 64, HOW_TO_MOUNT)
    expect(Buffer.isBuffer(empty) && empty.length).toBe(0)
  })

  it('accepts a body of exactly the limit', async () => {
    const { req } = nodeRequest({ chunks: ['12345', '678'] })
    expect((await readNodeBody(req, 8, HOW_TO_MOUNT)).toString()).toBe('12345678')
  })

  it('refuses a body one byte over the limit once it has read the rest to its end, as drained', async () => {
    const { req, stream } = nodeRequest({ chunks: ['12345', '6789', 'abc', 'def'] })
    const error = await refusal(readNodeBody(req, 8, HOW_TO_MOUNT))
    expect([error.code, error.status, wasDrained(error)]).toEqual(['payload_too_large', 413, true])
    expect(stream.readableEnded).toBe(true)
    expect(stream.isPaused()).toBe(false)
  })

  it('drains a body declared over the limit from its first byte, keeping none of it', async () => {
    const { req, stream } = nodeRequest({ chunks: ['12', '3'], headers: { 'content-length': '3' } })
    expect(wasDrained(await refusal(readNodeBody(req, 2, HOW_TO_MOUNT, 3)))).toBe(true)
    expect(stream.readableEnded).toBe(true)
  })

  it(`stops draining once no byte has arrived for ${DRAIN_IDLE_MS} ms: refused undrained, and paused`, async () => {
    const { req, stream } = nodeRequest({ chunks: ['12345', '6789'], end: false })
    const started = performance.now()
    const error = await refusal(readNodeBody(req, 8, HOW_TO_MOUNT))
    const waited = performance.now() - started
    expect([error.code, wasDrained(error)]).toEqual(['payload_too_large', false])
    // Paused: the rest stays on the connection, which the core's answer closes.
    expect(stream.isPaused()).toBe(true)
    expect(waited).toBeGreaterThanOrEqual(DRAIN_IDLE_MS - 50)
    expect(waited).toBeLessThan(DRAIN_IDLE_MS + 1500)
  })

  it(`drains at most ${DRAIN_MAX_BYTES / MIB} MiB past the limit, then pauses the request and refuses it undrained`, async () => {
    const { req, stream } = nodeRequest({ end: false })
    const reading = refusal(readNodeBody(req, MIB, HOW_TO_MOUNT))
    const written = await writeUntilPaused(stream, MIB, 80)
    const error = await reading
    expect([error.code, wasDrained(error), stream.isPaused()]).toEqual(['payload_too_large', false, true])
    expect(written).toBeGreaterThan(DRAIN_MAX_BYTES / MIB)
    expect(written).toBeLessThan(80)
  })

  it('stops at its time bound a body that keeps trickling in, each byte within the idle bound', async () => {
    const { req, stream } = nodeRequest({ chunks: ['123456789'], end: false })
    const trickle = setInterval(() => stream.write('x'), 10)
    try {
      const started = performance.now()
      const error = await refusal(readNodeBody(req, 8, HOW_TO_MOUNT, undefined, { bytes: MIB, ms: 200, idleMs: 100 }))
      expect([error.code, wasDrained(error), stream.isPaused()]).toEqual(['payload_too_large', false, true])
      expect(performance.now() - started).toBeLessThan(1000)
    } finally {
      clearInterval(trickle)
    }
  })

  describe('a body within the limit that stops arriving, or comes too slowly, before it can be judged', () => {
    it('refuses it as invalid_body once no byte has come for the idle bound, and pauses the request', async () => {
      const { req, stream } = nodeRequest({ chunks: ['{"a":'], end: false })
      const started = performance.now()
      const error = await refusal(readNodeBody(req, MIB, HOW_TO_MOUNT, undefined, undefined, { ms: 5_000, idleMs: 100 }))
      expect([error.code, wasDrained(error), stream.isPaused()]).toEqual(['invalid_body', false, true])
      expect(performance.now() - started).toBeGreaterThanOrEqual(90)
      expect(performance.now() - started).toBeLessThan(1000)
    })

    it('refuses at the total bound a body that keeps trickling in, each byte within the idle bound', async () => {
      const { req, stream } = nodeRequest({ chunks: ['{"a":'], end: false })
      const trickle = setInterval(() => stream.write(' '), 10)
      try {
        const started = performance.now()
        const error = await refusal(readNodeBody(req, MIB, HOW_TO_MOUNT, undefined, undefined, { ms: 200, idleMs: 100 }))
        expect([error.code, stream.isPaused()]).toEqual(['invalid_body', true])
        expect(performance.now() - started).toBeLessThan(1000)
      } finally {
        clearInterval(trickle)
      }
    })

    it('reads a body whose pieces each come within the idle bound', async () => {
      const { req, stream } = nodeRequest({ chunks: ['{"a":'], end: false })
      setTimeout(() => stream.write('1'), 60)
      setTimeout(() => stream.end('}'), 120)
      const body = await readNodeBody(req, MIB, HOW_TO_MOUNT, undefined, undefined, { ms: 1_000, idleMs: 100 })
      expect(body.toString()).toBe('{"a":1}')
    })

    it('hands over to the drain bounds once the body passes the limit', async () => {
      const { req, stream } = nodeRequest({ chunks: ['123456789'], end: false })
      // The receipt's bounds would cut it at once; the drain's give it time to end, and it is drained.
      setTimeout(() => stream.end('0'), 100)
      const error = await refusal(readNodeBody(req, 8, HOW_TO_MOUNT, undefined, undefined, { ms: 1, idleMs: 1 }))
      expect([error.code, wasDrained(error)]).toEqual(['payload_too_large', true])
    })
  })

  it('refuses undrained a body whose client goes away while it drains', async () => {
    const { req, stream } = nodeRequest({ chunks: ['123456789'], end: false })
    const reading = refusal(readNodeBody(req, 8, HOW_TO_MOUNT))
    setTimeout(() => stream.emit('close'), 5)
    const error = await reading
    expect([error.code, wasDrained(error)]).toEqual(['payload_too_large', false])
  })

  it('holds none of what it drains: of 32 MiB passed through, no chunk stays reachable', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const { req, stream } = nodeRequest({ end: false })
    const reading = refusal(readNodeBody(req, MIB, HOW_TO_MOUNT))
    // One weak reference per chunk (a byte count would also see buffers the collector has not freed yet).
    const sent: WeakRef<Buffer>[] = []
    for (let i = 0; i < 512; i++) {
      const chunk = Buffer.alloc(64 * 1024, 0x20)
      sent.push(new WeakRef(chunk))
      if (!stream.write(chunk)) await once(stream, 'drain')
    }
    // Everything written has been read; the reader is still draining, waiting for the end.
    await new Promise((resolve) => setTimeout(resolve, 10))
    gc()
    const alive = sent.filter((chunk) => chunk.deref() !== undefined).length
    stream.end()
    expect(wasDrained(await reading)).toBe(true)
    expect(alive).toBeLessThanOrEqual(2)
  })

  it('holds a body sent a byte at a time in pieces: of 4 096 one-byte chunks, only the first stays reachable', async () => {
    const { req, stream } = nodeRequest({ end: false })
    const reading = readNodeBody(req, MIB, HOW_TO_MOUNT)
    // Kept chunk by chunk, such a body held an object for every byte: 220 MB for 1 MiB.
    const held = await writeOneByteChunks(stream, 4096)
    stream.end()
    expect((await reading).toString()).toBe(digitText(4096))
    expect(held).toBeLessThanOrEqual(2)
  })

  it('refuses a body shorter or longer than its declared length', async () => {
    const short = nodeRequest({ chunks: ['{}'], headers: { 'content-length': '3' } })
    const long = nodeRequest({ chunks: ['{"a":1}'], headers: { 'content-length': '2' } })
    for (const { req } of [short, long]) {
      const error = await refusal(readNodeBody(req, 64, HOW_TO_MOUNT))
      expect([error.code, error.status]).toEqual(['invalid_body', 400])
      expect(error.message).toMatch(/could not be read in full/)
    }
  })

  it('takes the declared length from the core when given, rather than from the headers', async () => {
    const { req } = nodeRequest({ chunks: ['{}'] })
    const error = await refusal(readNodeBody(req, 64, HOW_TO_MOUNT, 3))
    expect(error.code).toBe('invalid_body')
    expect((await readNodeBody(nodeRequest({ chunks: ['{}'] }).req, 64, HOW_TO_MOUNT, 2)).toString()).toBe('{}')
  })

  it('reads a body of its declared length, and a body that declares none', async () => {
    const declared = nodeRequest({ chunks: ['{}'], headers: { 'content-length': '2' } })
    const streamed = nodeRequest({ chunks: ['{', '}'], headers: { 'transfer-encoding': 'chunked' } })
    expect((await readNodeBody(declared.req, 64, HOW_TO_MOUNT)).toString()).toBe('{}')
    expect((await readNodeBody(streamed.req, 64, HOW_TO_MOUNT)).toString()).toBe('{}')
  })

  it('refuses a body whose stream fails or closes before its end', async () => {
    const failing = nodeRequest({ chunks: ['{'], end: false })
    const closing = nodeRequest({ chunks: ['{'], end: false })
    const failed = readNodeBody(failing.req, 64, HOW_TO_MOUNT)
    const closed = readNodeBody(closing.req, 64, HOW_TO_MOUNT)
    setTimeout(() => {
      failing.stream.emit('error', new Error('socket hang up'))
      closing.stream.emit('close')
    }, 5)
    for (const error of [await refusal(failed), await refusal(closed)]) {
      expect([error.code, error.status]).toEqual(['invalid_body', 400])
    }
  })

  it('refuses at once, as invalid_body, a request whose client went away before its body was read', async () => {
    // An async resolver ran first; meanwhile the sender left and Node destroyed the request, whose
    // close came and went: nothing more will arrive, and the idle bound is not waited out.
    const { req, stream } = nodeRequest({ chunks: ['{"event":"x"}'], end: false })
    stream.destroy()
    await once(stream, 'close')
    const error = await refusal(readNodeBody(req, 64, HOW_TO_MOUNT))
    expect([error.code, error.status]).toEqual(['invalid_body', 400])
    expect(stream.listenerCount('data') + stream.listenerCount('end') + stream.listenerCount('close')).toBe(0)
  })

  it('leaves no listener on the request once it has answered', async () => {
    const read = nodeRequest({ chunks: ['{}'] })
    await readNodeBody(read.req, 64, HOW_TO_MOUNT)
    const refused = nodeRequest({ chunks: ['123456789'], end: false })
    await refusal(readNodeBody(refused.req, 8, HOW_TO_MOUNT, undefined, { bytes: MIB, ms: 100, idleMs: 50 }))
    for (const { stream } of [read, refused]) {
      for (const event of ['data', 'end', 'error', 'close']) expect(stream.listenerCount(event), event).toBe(0)
    }
  })

  it('refuses a request whose body something else read, saying how to mount the webhook', async () => {
    const req = Object.assign(nodeRequest({ chunks: ['{}'] }).req, { _body: true })
    const error = await refusal(readNodeBody(req, 64, HOW_TO_MOUNT))
    expect([error.code, error.status]).toEqual(['raw_body_unavailable', 500])
    expect(error.message.endsWith(HOW_TO_MOUNT)).toBe(true)
  })

  describe('over a real connection', () => {
    let close: (() => Promise<void>) | undefined
    afterEach(() => close?.())

    /** A server that answers with what `readNodeBody` made of the request. */
    async function serve(limit: number) {
      const outcomes: (string | WebhookError)[] = []
      const server = createServer((req, res) => {
        readNodeBody(req, limit, HOW_TO_MOUNT).then(
          (body) => {
            outcomes.push(body.toString())
            res.end('ok')
          },
          (error: WebhookError) => {
            outcomes.push(error)
            res.destroy()
          },
        )
      })
      await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening))
      close = () => new Promise((closed) => server.close(() => closed()))
      return { port: (server.address() as AddressInfo).port, outcomes }
    }

    it('refuses a body whose client goes away before sending it all', async () => {
      const { port, outcomes } = await serve(1024)
      const client = request({ port, host: '127.0.0.1', method: 'POST', headers: { 'content-length': '100' } })
      client.on('error', () => {})
      client.write('{"partial":')
      await new Promise((resolve) => setTimeout(resolve, 50))
      client.destroy()
      await expect.poll(() => outcomes.length).toBe(1)
      expect(outcomes[0]).toBeInstanceOf(WebhookError)
      expect((outcomes[0] as WebhookError).code).toBe('invalid_body')
    })
  })
})

describe('nodeBody', () => {
  const receive = (req: IncomingMessage, maxBodySize?: number) =>
    createReceiver({ auth: { mode: 'none' }, maxBodySize }).verify({
      method: 'POST',
      url: '/hooks',
      headers: nodeRequestHeaders(req),
      body: nodeBody(req, HOW_TO_MOUNT),
    })

  it("hands the receiver a Node request's body, read to its end and parsed", async () => {
    const { req } = nodeRequest({ chunks: ['{"event":', '"customer.created"}'], headers: { 'content-length': '28' } })
    const result = await receive(req)
    expect(result.ok && result.delivery.payload).toEqual({ event: 'customer.created' })
  })

  it('is refused 413 past maxBodySize, read to its end first, as readNodeBody refuses it', async () => {
    const { req } = nodeRequest({ chunks: ['{"event":', '"customer.created"}'] })
    const result = await receive(req, 16)
    expect(result.ok || [result.response.status, result.error?.code, result.response.headers.connection]).toEqual([
      413,
      'payload_too_large',
      undefined,
    ])
  })

  it('is refused 400 when the client sends another length than it declared', async () => {
    const { req } = nodeRequest({ chunks: ['{"event":"x"}'], headers: { 'content-length': '40' } })
    const result = await receive(req)
    expect(result.ok || [result.response.status, result.error?.code]).toEqual([400, 'invalid_body'])
  })

  it('says how to mount the webhook when something read the body first', async () => {
    const req = Object.assign(nodeRequest({ chunks: ['{}'] }).req, { _body: true })
    const result = await receive(req)
    expect(result.ok || [result.response.status, result.error?.code]).toEqual([500, 'raw_body_unavailable'])
    expect(result.ok || result.error?.message.endsWith(HOW_TO_MOUNT)).toBe(true)
  })
})

describe('settleWhenAnswered', () => {
  /** A response that records what its delivery was settled as. */
  function answered(statusCode: number) {
    const ended: unknown[] = []
    const res = Object.assign(new EventEmitter(), {
      statusCode,
      writableEnded: false,
      destroyed: false,
      end(...args: unknown[]) {
        ended.push(args)
        return res
      },
    }) as unknown as ServerResponse & { writableEnded: boolean; destroyed: boolean }
    const settled: boolean[] = []
    const outcome = settleWhenAnswered(res, async (handled) => {
      settled.push(handled)
    })
    /** The sender goes away before the answer was written. */
    const drop = () => {
      res.destroyed = true
      res.emit('close')
    }
    return { res, settled, outcome, drop, ended }
  }

  it('settles a delivery answered below 400 as handled, once', () => {
    for (const status of [200, 204, 399]) {
      const { res, settled } = answered(status)
      res.emit('finish')
      res.emit('close')
      expect(settled, String(status)).toEqual([true])
    }
  })

  it('releases a delivery answered with an error, so the retry runs', () => {
    for (const status of [400, 500]) {
      const { res, settled } = answered(status)
      res.emit('finish')
      res.emit('close')
      expect(settled, String(status)).toEqual([false])
    }
  })

  it('leaves a delivery unsettled when its connection closes before the answer, while the handler runs', () => {
    const { settled, drop } = answered(200)
    drop()
    expect(settled).toEqual([])
  })

  it('settles by the answer the app writes after its sender went away, and passes the answer on', () => {
    for (const [status, handled] of [
      [200, true],
      [500, false],
    ] as const) {
      const { res, settled, drop, ended } = answered(status)
      drop()
      res.end('{"ok":true}')
      res.end()
      expect(settled, String(status)).toEqual([handled])
      expect(ended, 'the real end() still runs').toEqual([['{"ok":true}'], []])
    }
  })

  it('settles by the status of an answer ended when the connection closed before it was all sent', () => {
    const { res, settled, drop } = answered(204)
    res.writableEnded = true
    drop()
    expect(settled).toEqual([true])
    expect(res.listenerCount('finish') + res.listenerCount('close')).toBe(0)
  })

  it('settles by the answer written after a sender that went away before the claim was made (a loaded server)', async () => {
    // The sender drops its connection while the server is still verifying and claiming: by the
    // time the adapter hands the response over, its 'close' has already been emitted.
    let settle: (handled: boolean) => void = () => {}
    const settled = new Promise<boolean>((resolve) => {
      settle = resolve
    })
    const server = createServer((_req, res) => {
      const answer = () => {
        settleWhenAnswered(res, async (handled) => settle(handled))
        res.end('{"ok":true}')
      }
      if (res.destroyed) answer()
      else res.once('close', answer)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const sent = request({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, method: 'POST', path: '/' })
      sent.on('error', () => {})
      sent.end('{}')
      await once(server, 'request')
      sent.destroy()
      // Settled at once, or never: the bound only keeps a failure from hanging.
      const unsettled = new Promise<string>((resolve) => setTimeout(resolve, 2_000, 'never settled'))
      expect(await Promise.race([settled, unsettled])).toBe(true)
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })

  it("takes an adapter's verdict only once the connection is gone, where no answer will be written", () => {
    const open = answered(200)
    open.outcome(false)
    open.res.emit('finish')
    expect(open.settled, 'connected: the answer decides').toEqual([true])
    const gone = answered(200)
    gone.drop()
    gone.outcome(false)
    gone.outcome(true)
    expect(gone.settled, 'gone: the first verdict decides, once').toEqual([false])
  })
})
