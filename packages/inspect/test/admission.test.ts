import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connect, type Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import { sign } from '@hookguard/core'
import { afterEach, describe, expect, it } from 'vitest'
import { createAdmission } from '../src/admission.ts'
import { inspectCommand, startInspector } from '../src/index.ts'
import { cleanup, inspector, nodeApp, SECRET, send } from './helpers.ts'

/**
 * What the receiving address takes in at once is bounded: connections, and the bytes of bodies
 * still arriving. A sender past a bound gets 503 `inspector_busy` with `Connection: close`, never a
 * connection that stalls; memory under many stalled uploads is measured in a process of its own.
 */

const sockets: Socket[] = []
const children: ChildProcess[] = []
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy()
  for (const child of children.splice(0)) child.kill()
  await cleanup()
})

const BODY = '{"event":"order.paid"}'
const MiB = 1024 * 1024

/** Opens an upload that declares `length` bytes, sends `sent` of them, and stalls. Resolves once its headers are written. */
function stalledUpload(url: URL, length: number, sent: number): Promise<{ socket: Socket; answer: Promise<string> }> {
  return new Promise((resolve, reject) => {
    let answer = ''
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(
        `POST /hooks HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nX-Service-Hmac-Signature: ${'ab'.repeat(32)}\r\nContent-Length: ${length}\r\n\r\n`,
      )
      if (sent > 0) socket.write(Buffer.alloc(sent, 0x20))
      resolve({ socket, answer: ended })
    })
    sockets.push(socket)
    const ended = new Promise<string>((done) => {
      socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString('latin1')
      })
      socket.on('close', () => done(answer))
      socket.on('error', () => done(answer))
    })
    socket.once('error', reject)
  })
}

/** A request written whole before anything is read, as the service's sender does; resolves what came back. */
function writeFirst(url: URL, body: Buffer): Promise<string> {
  return new Promise((resolve) => {
    let answer = ''
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(`POST /hooks HTTP/1.1\r\nHost: ${url.host}\r\nContent-Length: ${body.byteLength}\r\n\r\n`)
      socket.write(body)
    })
    sockets.push(socket)
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1')
    })
    socket.on('close', () => resolve(answer))
    socket.on('error', () => resolve(answer))
  })
}

const within = <T>(ms: number, promise: Promise<T>): Promise<T> =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`nothing within ${ms} ms`)), ms).unref())])

describe('the bytes of bodies in flight', () => {
  it('past the budget, answer 503 inspector_busy with Connection: close, before anything is forwarded; room comes back', async () => {
    const seen: string[] = []
    const app = await nodeApp((req, res) => {
      seen.push(req.url ?? '')
      req.resume()
      req.on('end', () => res.end('{}'))
    })
    const { inspector: running, waitFor } = await inspector({ forwardTo: app.url, maxBodySize: MiB, maxInFlightBytes: 3 * MiB + 1024 })
    const url = new URL(running.receiveUrl)
    // Three stalled uploads of 1 MiB fill the budget.
    const stalled = await Promise.all([1, 2, 3].map(() => stalledUpload(url, MiB, 1000)))
    await new Promise((r) => setTimeout(r, 100))
    const refused = await within(5_000, writeFirst(url, Buffer.alloc(64 * 1024, 0x20)))
    expect(refused).toMatch(/^HTTP\/1\.1 503 /)
    expect(refused).toMatch(/\r\nconnection: close\r\n/i)
    expect(refused).toMatch(/\r\nretry-after: 1\r\n/i)
    expect(refused).toContain('"error":"inspector_busy"')
    // A small body still fits: the budget counts what each declares.
    const small = await send(`${running.receiveUrl}/ok`, {
      headers: { 'x-service-hmac-signature': await sign(BODY, SECRET), 'content-length': String(BODY.length) },
      chunks: [BODY],
    })
    expect(small.status).toBe(200)
    const forwarded = seen.length
    expect(seen).toContain('/ok')
    // The stalled ones end: their room comes back.
    for (const { socket } of stalled) socket.destroy()
    await waitFor(4)
    const again = await send(`${running.receiveUrl}/again`, {
      headers: { 'x-service-hmac-signature': await sign(BODY, SECRET), 'content-length': String(MiB) },
      chunks: [Buffer.concat([Buffer.from(BODY), Buffer.alloc(MiB - BODY.length, 0x20)])],
    })
    expect(again.status).toBe(200)
    expect(seen.length).toBe(forwarded + 1)
  })

  it('counts a chunked body as the size limit', async () => {
    const { inspector: running } = await inspector({ maxBodySize: 1024, maxInFlightBytes: 1025 })
    const url = new URL(running.receiveUrl)
    const stalled = await stalledUpload(url, 1000, 10)
    const chunked = await send(`${running.receiveUrl}/hooks`, { headers: { 'transfer-encoding': 'chunked' }, chunks: ['{}'] })
    expect(chunked.status).toBe(503)
    stalled.socket.destroy()
  })

  it('is refused at start when it could not hold one body of the size limit', async () => {
    await expect(startInspector({ auth: { mode: 'none' }, port: 0, uiPort: 0, maxBodySize: 1024, maxInFlightBytes: 1024 })).rejects.toThrow(
      /maxInFlightBytes/,
    )
  })
})

describe('the connections', () => {
  it('past the cap, a request gets 503 inspector_busy with Connection: close, a body written first included', async () => {
    const { inspector: running, waitFor } = await inspector({ maxConnections: 2 })
    const url = new URL(running.receiveUrl)
    const held = await Promise.all([stalledUpload(url, 100, 1), stalledUpload(url, 100, 1)])
    await new Promise((r) => setTimeout(r, 100))
    const answer = await within(5_000, writeFirst(url, Buffer.alloc(256 * 1024, 0x20)))
    expect(answer).toMatch(/^HTTP\/1\.1 503 /)
    expect(answer).toMatch(/\r\nconnection: close\r\n/i)
    expect(answer).toContain('"error":"inspector_busy"')
    for (const { socket } of held) socket.destroy()
    await waitFor(2)
    const signed = await send(`${running.receiveUrl}/hooks`, {
      headers: { 'x-service-hmac-signature': await sign(BODY, SECRET) },
      chunks: [BODY],
    })
    expect(signed.status).toBe(200)
  })
})

/** A connection that sends nothing; resolves once it is open, with whether it has been closed since. */
function silent(port: number): Promise<{ socket: Socket; closed: () => boolean }> {
  return new Promise((resolve, reject) => {
    let closed = false
    const socket = connect(port, '127.0.0.1', () => resolve({ socket, closed: () => closed }))
    sockets.push(socket)
    socket.on('close', () => {
      closed = true
    })
    socket.on('error', reject)
  })
}

describe('connections that send nothing', () => {
  it('twice the cap of them shut out no delivery: the oldest makes room, never one with a request in progress', async () => {
    const { inspector: running, waitFor } = await inspector({ maxConnections: 4 })
    const url = new URL(running.receiveUrl)
    const upload = await stalledUpload(url, 100, 1)
    const idle = []
    for (let i = 0; i < 8; i++) idle.push(await silent(Number(url.port)))
    await new Promise((r) => setTimeout(r, 100))
    const signed = await within(
      2_000,
      send(`${running.receiveUrl}/hooks`, {
        headers: { 'x-service-hmac-signature': await sign(BODY, SECRET), connection: 'close' },
        chunks: [BODY],
      }),
    )
    expect(signed.status).toBe(200)
    const [record] = await within(2_000, waitFor(1))
    expect(record?.verdict).toBe('verified')
    expect(idle.filter(({ closed }) => closed()).length).toBeGreaterThan(0)
    expect(upload.socket.destroyed).toBe(false)
    // The upload still in progress is answered when its body ends.
    upload.socket.end(Buffer.alloc(99, 0x20))
    expect(await within(2_000, upload.answer)).toMatch(/^HTTP\/1\.1 401 /)
  })

  it('are closed when they send no request head within the bound, a kept-alive one after its answer too', async () => {
    const server = createServer((_req, res) => res.end('ok'))
    createAdmission(server, { maxConnections: 4, maxInFlightBytes: 1024, maxBodySize: 100, headTimeoutMs: 200 })
    server.listen(0, '127.0.0.1')
    await new Promise((r) => server.once('listening', r))
    try {
      const port = (server.address() as AddressInfo).port
      const quiet = await silent(port)
      const kept = await silent(port)
      let answer = ''
      kept.socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString('latin1')
      })
      kept.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
      await new Promise((r) => setTimeout(r, 100))
      expect(quiet.closed()).toBe(false)
      const started = Date.now()
      while ((!quiet.closed() || !kept.closed()) && Date.now() - started < 2_000) await new Promise((r) => setTimeout(r, 20))
      expect(quiet.closed()).toBe(true)
      expect(kept.closed()).toBe(true)
      expect(answer).toMatch(/^HTTP\/1\.1 200 /)
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })

  it('are kept open while a pipelined request is still arriving, after the answer before it is out', async () => {
    // The second request's head comes with the first, its body after the bound: the answer to the
    // first must not start the bound's clock while the second is in progress.
    const server = createServer((req, res) => {
      req.resume()
      req.on('end', () => res.end('ok'))
    })
    createAdmission(server, { maxConnections: 4, maxInFlightBytes: 1024, maxBodySize: 100, headTimeoutMs: 200 })
    server.listen(0, '127.0.0.1')
    await new Promise((r) => server.once('listening', r))
    try {
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1')
      sockets.push(socket)
      let answer = ''
      socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString('latin1')
      })
      const closed = new Promise((r) => socket.once('close', r))
      socket.on('error', () => {})
      const head = (path: string) => `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n`
      socket.write(`${head('/first')}{}${head('/second')}`)
      await new Promise((r) => setTimeout(r, 600))
      expect(socket.destroyed).toBe(false)
      socket.write('{}')
      // Idle after both answers: closed by the bound, as any kept-alive connection is.
      expect(await within(2_000, closed)).toBe(false)
      expect(answer.match(/HTTP\/1\.1 200 /g)).toHaveLength(2)
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})

/** Writes `bytes` on a connection of its own; resolves what came back once it closes (or after 2 s). */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    let answer = ''
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes, 'latin1'))
    sockets.push(socket)
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1')
    })
    socket.on('close', () => resolve(answer))
    socket.on('error', () => resolve(answer))
    setTimeout(() => socket.destroy(), 2_000).unref()
  })
}

describe('requests that are not HTTP', () => {
  const requests: Record<string, string> = {
    'a control byte in the path': 'POST /w\x01 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}',
    'a high byte in the path': 'POST /w\xff HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}',
    'bare line feeds': 'POST /w HTTP/1.1\nHost: x\nContent-Length: 2\n\n{}',
    'a folded header': 'POST /w HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\n{}',
    'Content-Length and Transfer-Encoding':
      'POST /w HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    'two different Content-Length': 'POST /w HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x',
  }

  it('are answered 400 invalid_body in JSON, nothing of them echoed, and counted on the terminal', async () => {
    const warnings: string[] = []
    const { inspector: running } = await inspector({ onWarning: (line) => warnings.push(line) })
    const port = Number(new URL(running.receiveUrl).port)
    for (const [name, bytes] of Object.entries(requests)) {
      const answer = await rawExchange(port, bytes)
      const [head = '', body = ''] = answer.split('\r\n\r\n')
      expect(head, name).toMatch(/^HTTP\/1\.1 400 /)
      expect(head, name).toMatch(/\r\ncontent-type: application\/json/i)
      expect(head, name).toMatch(/\r\ncache-control: no-store\r\n/i)
      expect(head, name).toMatch(/\r\nconnection: close(\r\n|$)/i)
      expect(JSON.parse(body), name).toEqual({ error: 'invalid_body', message: expect.stringMatching(/parsed as HTTP/) })
      expect(answer, name).not.toContain('/w')
    }
    // The process is up and still receives.
    const signed = await send(`${running.receiveUrl}/hooks`, {
      headers: { 'x-service-hmac-signature': await sign(BODY, SECRET) },
      chunks: [BODY],
    })
    expect(signed.status).toBe(200)
    expect(warnings.join('\n')).toMatch(/1 request answered 400 invalid_body/)
  })

  it('with headers over the limit, are answered 431 in JSON, as Node would answer them', async () => {
    const { inspector: running } = await inspector()
    const port = Number(new URL(running.receiveUrl).port)
    const answer = await rawExchange(port, `POST /w HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\nContent-Length: 2\r\n\r\n{}`)
    const [head = '', body = ''] = answer.split('\r\n\r\n')
    expect(head).toMatch(/^HTTP\/1\.1 431 /)
    expect(JSON.parse(body)).toEqual({ error: 'headers_too_large', message: expect.any(String) })
    expect(answer).not.toContain('aaaa')
  })

  it('pipelined after a request, are answered after its answer, on a connection that is then closed', async () => {
    const { inspector: running, waitFor } = await inspector({ auth: { mode: 'none' } })
    const port = Number(new URL(running.receiveUrl).port)
    const answer = await rawExchange(port, `POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}${requests['bare line feeds']}`)
    expect(answer).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\n\r\nHTTP\/1\.1 400 [\s\S]*"error":"invalid_body"/)
    expect((await waitFor(1)).length).toBe(1)
  })
})

describe('the flags', () => {
  it('--max-connections and --max-in-flight-bytes take a whole number from 1 to a bound, and say which', async () => {
    const io = { stdout: { write: () => {} }, stderr: { write: () => {} }, env: { HOOKGUARD_SECRET: SECRET } }
    for (const [args, message] of [
      [['--max-connections', '0'], '--max-connections must be a whole number from 1 to 65536'],
      [['--max-connections', '1.5'], '--max-connections must be a whole number from 1 to 65536'],
      // A value past the bound would remove the bound, not set it.
      [['--max-connections', '999999999999999'], '--max-connections must be a whole number from 1 to 65536'],
      [['--max-in-flight-bytes', '1e9'], '--max-in-flight-bytes must be a whole number from 1 to 1099511627776'],
      [['--max-in-flight-bytes', '9007199254740993'], '--max-in-flight-bytes must be a whole number from 1 to 1099511627776'],
      [['--max-in-flight-bytes', '1048576'], '--max-in-flight-bytes must be over the size limit (1048576 bytes)'],
      [['--max-in-flight-bytes', '-1'], 'A value that starts with a dash is given as --name=value.'],
      [['--max-in-flight-bytes=-1'], '--max-in-flight-bytes must be a whole number from 1 to 1099511627776'],
    ] as const) {
      await expect(inspectCommand([...args], io), args.join(' ')).rejects.toThrow(message)
    }
  })

  it('set the bounds', async () => {
    const lines: string[] = []
    const controller = new AbortController()
    const done = inspectCommand(
      ['--json', '--port', '0', '--ui-port', '0', '--max-connections', '1', '--max-in-flight-bytes', String(2 * MiB)],
      {
        stdout: { write: (text: string) => lines.push(text) },
        stderr: { write: () => {} },
        env: { HOOKGUARD_SECRET: SECRET },
        signal: controller.signal,
      },
    )
    const deadline = Date.now() + 5_000
    while (lines.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    const url = new URL((JSON.parse(lines[0] as string) as { receive: string }).receive)
    const held = await stalledUpload(url, 100, 1)
    await new Promise((r) => setTimeout(r, 100))
    expect(await within(5_000, writeFirst(url, Buffer.from(BODY)))).toMatch(/^HTTP\/1\.1 503 /)
    held.socket.destroy()
    controller.abort()
    expect(await done).toBe(0)
  })
})

const REPOSITORY = fileURLToPath(new URL('../../..', import.meta.url))

/** `hookguard inspect` in a process of its own, from source; resolves its receiving address. */
async function inspectProcess(args: string[]): Promise<{ child: ChildProcess; receive: URL }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--conditions=@hookguard/source',
      'packages/emulator/src/cli.ts',
      'inspect',
      '--json',
      '--port',
      '0',
      '--ui-port',
      '0',
      ...args,
    ],
    { cwd: REPOSITORY, env: { ...process.env, HOOKGUARD_SECRET: SECRET }, stdio: ['ignore', 'pipe', 'inherit'] },
  )
  children.push(child)
  const ready = await within(
    30_000,
    new Promise<string>((resolve) => {
      let out = ''
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString()
        if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')))
      })
    }),
  )
  return { child, receive: new URL((JSON.parse(ready) as { receive: string }).receive) }
}

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024

describe('memory under 200 stalled uploads of 1 MiB', () => {
  it('stays within the in-flight budget and the connection cap, at their defaults', async () => {
    const { child, receive } = await inspectProcess([])
    const pid = child.pid as number
    await new Promise((r) => setTimeout(r, 300))
    const before = rssMiB(pid)
    // Each declares 1 MiB, sends all but its last byte, and stalls.
    const uploads = []
    for (let i = 0; i < 200; i++) uploads.push(await stalledUpload(receive, MiB, MiB - 1))
    let peak = 0
    const deadline = Date.now() + 4_000
    while (Date.now() < deadline) {
      peak = Math.max(peak, rssMiB(pid))
      await new Promise((r) => setTimeout(r, 200))
    }
    console.log(`inspector RSS: ${before.toFixed(0)} MiB before, ${peak.toFixed(0)} MiB at peak under 200 stalled 1 MiB uploads`)
    // The budget is 32 MiB of bodies; the rest of the growth is sockets and buffers in passing.
    expect(peak - before).toBeLessThan(96)
    const refused = (await Promise.all(uploads.slice(-20).map(({ answer }) => within(5_000, answer)))).filter((a) =>
      /^HTTP\/1\.1 503 /.test(a),
    )
    // Those that did not fit were answered, not left waiting.
    expect(refused.length).toBe(20)
  }, 60_000)
})
