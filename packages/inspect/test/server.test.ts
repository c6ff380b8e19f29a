import type { IncomingMessage } from 'node:http'
import { connect } from 'node:net'
import { sign } from '@hookguard/core'
import { refusedOrigin } from '@hookguard/testkit/ports'
import { afterEach, describe, expect, it } from 'vitest'
import { deliver } from '../../emulator/src/index.ts'
import { presetsFor } from '../src/actions.ts'
import { inspectCommand } from '../src/command.ts'
import { INSPECT_HELP } from '../src/command-options.ts'
import { DEFAULT_PORT, DEFAULT_UI_PORT } from '../src/defaults.ts'
import type { InspectedRecord } from '../src/record.ts'
import { CSP } from '../src/ui.ts'
import { jsonLine } from '../src/view.ts'
import { cleanup, hookguardApp, inspector, nodeApp, SECRET, send } from './helpers.ts'

afterEach(cleanup)

const BODY = '{"event": "order.paid", "data": {"id": 42}}'

/** An app that records what it received and answers `status`. */
async function recordingApp(status = 200) {
  const seen: { method: string; url: string; rawHeaders: string[]; body: Buffer; chunks: number }[] = []
  const app = await nodeApp((req: IncomingMessage, res) => {
    const parts: Buffer[] = []
    req.on('data', (chunk: Buffer) => parts.push(chunk))
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(parts),
        chunks: parts.length,
      })
      res.writeHead(status, { 'content-type': 'application/json', 'x-app': 'yes' }).end(JSON.stringify({ status }))
    })
  })
  return { ...app, seen }
}

describe('inspect, as the receiver', () => {
  it('answers a signed delivery 200 and records it verified', async () => {
    const { inspector: running, waitFor } = await inspector()
    const answer = await send(`${running.receiveUrl}/hooks`, {
      headers: { 'content-type': 'application/json', 'x-service-hmac-signature': await sign(BODY, SECRET) },
      chunks: [BODY],
    })
    expect(answer.status).toBe(200)
    const [record] = await waitFor(1)
    expect(record).toMatchObject({ kind: 'delivery', verdict: 'verified', status: 200, url: '/hooks', form: 'service' })
    expect(Buffer.from(record?.body ?? []).toString()).toBe(BODY)
  })

  it('sends a delivery’s detail with its body once: a 1 MiB JSON body in about its base64, its payload printed by the page', async () => {
    const { inspector: running, waitFor } = await inspector()
    const body = JSON.stringify({ note: 'abcdefghij'.repeat(100_000) })
    const answer = await send(`${running.receiveUrl}/hooks`, {
      headers: { 'x-service-hmac-signature': await sign(body, SECRET), 'content-length': String(body.length) },
      chunks: [body],
    })
    expect(answer.status).toBe(200)
    const [record] = await waitFor(1)
    const detail = await send(`${new URL(running.uiUrl).origin}/api/records/${record?.id}`, {
      method: 'GET',
      headers: { 'x-inspect-token': running.accessToken },
    })
    expect(detail.status).toBe(200)
    const shown = JSON.parse(detail.body.toString()) as { bodyBase64: string; payload?: string }
    expect(Buffer.from(shown.bodyBase64, 'base64').toString()).toBe(body)
    expect(shown.payload).toBeUndefined()
    // Base64 is 4/3 of the body; a second copy of it (the pretty payload) made the answer 2.3 times the body.
    expect(detail.body.byteLength).toBeLessThan(1.4 * body.length)
  })

  it('refuses a delivery signed with the secret and a newline, says so in the record and never in the answer', async () => {
    const { inspector: running, waitFor } = await inspector()
    const answer = await send(`${running.receiveUrl}/hooks`, {
      headers: { 'x-service-hmac-signature': await sign(BODY, `${SECRET}\n`) },
      chunks: [BODY],
    })
    expect(answer.status).toBe(401)
    expect(JSON.parse(answer.body.toString())).toEqual({ error: 'invalid_signature', message: expect.any(String) })
    expect(answer.body.toString()).not.toMatch(/newline|variant|secret #/i)
    const [record] = await waitFor(1)
    expect(record).toMatchObject({ verdict: 'refused', code: 'invalid_signature' })
    expect(record?.diagnosis?.match?.variant).toBe('secret_newline')
  })

  it('answers a duplicate as dedupe does: 200 without the handler, marked done', async () => {
    const { inspector: running, waitFor } = await inspector()
    const headers = { 'x-service-hmac-signature': await sign(BODY, SECRET) }
    await send(`${running.receiveUrl}/hooks`, { headers, chunks: [BODY] })
    await send(`${running.receiveUrl}/hooks`, { headers, chunks: [BODY] })
    const [first, second] = await waitFor(2)
    expect(first?.duplicate).toBeUndefined()
    expect(second).toMatchObject({ verdict: 'verified', duplicate: 'done', repeatOf: first?.id })
  })

  it('issues tokens in mode oauth2 and links a delivery to the token request', async () => {
    const auth = { mode: 'oauth2', appId: 'app-1', secret: 'app-secret-for-tests-0123456789ab' } as const
    const { inspector: running, waitFor } = await inspector({ auth })
    const issued = await send(`${running.receiveUrl}/token?appid=app-1&secret=${auth.secret}&grant_type=client_credentials`, {
      method: 'GET',
    })
    expect(issued.status).toBe(200)
    const token = (JSON.parse(issued.body.toString()) as { access_token: string }).access_token
    const delivered = await send(`${running.receiveUrl}/hooks?access_token=${token}`, { chunks: [BODY] })
    expect(delivered.status).toBe(200)
    const [tokenRow, delivery] = await waitFor(2)
    expect(tokenRow).toMatchObject({ kind: 'token', verdict: 'verified' })
    expect(delivery).toMatchObject({ kind: 'delivery', verdict: 'verified', tokenId: tokenRow?.id })
  })
})

describe('inspect --forward-to', () => {
  it('forwards method, path and query, headers and bytes unchanged, and hands the app’s answer back', async () => {
    const app = await recordingApp(202)
    const { inspector: running, waitFor } = await inspector({ forwardTo: `${app.url}/base` })
    const binary = new Uint8Array([0, 1, 2, 0xff, 0xfe, 0x0d, 0x0a, 0x20])
    const answer = await send(`${running.receiveUrl}/hooks?tenant=a&x=%20`, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'x-custom': 'Value With  Spaces', 'content-length': '8' },
      chunks: [binary],
    })
    expect(answer.status).toBe(202)
    expect(answer.headers['x-app']).toBe('yes')
    const [seen] = app.seen
    expect(seen?.method).toBe('PUT')
    expect(seen?.url).toBe('/base/hooks?tenant=a&x=%20')
    expect(new Uint8Array(seen?.body ?? [])).toEqual(binary)
    expect(seen?.rawHeaders).toEqual(expect.arrayContaining(['x-custom', 'Value With  Spaces']))
    const [record] = await waitFor(1)
    expect(record?.app?.status).toBe(202)
    expect(record?.body).toEqual(binary)
  })

  it('judges, records and forwards every header line, past the thousand or so Node keeps by default', async () => {
    const app = await recordingApp(200)
    app.server.maxHeadersCount = 0
    const { inspector: running, waitFor } = await inspector({ forwardTo: app.url })
    // 1 100 lines before the signature (13 KiB of head, under Node's 16 KiB).
    const headers: Record<string, string> = {}
    for (let i = 0; i < 1_100; i++) headers[`x-filler-${i}`] = 'v'
    headers['x-service-hmac-signature'] = await sign(BODY, SECRET)
    const answer = await send(`${running.receiveUrl}/hooks`, {
      headers: { ...headers, 'content-type': 'application/json' },
      chunks: [BODY],
    })
    expect(answer.status).toBe(200)
    const [record] = await waitFor(1)
    expect(record?.verdict).toBe('verified')
    expect(record?.disagreement).toBeUndefined()
    expect(record?.headers.map(([name]) => name.toLowerCase())).toEqual(
      expect.arrayContaining(['x-filler-1099', 'x-service-hmac-signature']),
    )
    const names = app.seen[0]?.rawHeaders.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase())
    expect(names).toEqual(expect.arrayContaining(['x-filler-1099', 'x-service-hmac-signature']))
  })

  it('forwards a chunked body byte for byte', async () => {
    const app = await recordingApp()
    const { inspector: running, waitFor } = await inspector({ forwardTo: app.url })
    const chunks = ['{"event":', ' "ping",', '\n "n": 1}']
    await send(`${running.receiveUrl}/hooks`, { headers: { 'x-service-hmac-signature': await sign(chunks.join(''), SECRET) }, chunks })
    expect(app.seen[0]?.body.toString()).toBe(chunks.join(''))
    expect(app.seen[0]?.rawHeaders.map((h) => h.toLowerCase())).toContain('transfer-encoding')
    const [record] = await waitFor(1)
    expect(record).toMatchObject({ verdict: 'verified', app: { status: 200 } })
  })

  it('forwards a body sent a byte to a chunk in pieces, not a write to the app for every byte', async () => {
    const app = await recordingApp()
    const { inspector: running, waitFor } = await inspector({ forwardTo: app.url })
    const body = `{"event":"ping","data":"${'x'.repeat(4000)}"}`
    const { port } = new URL(running.receiveUrl)
    // Every byte its own chunk, all written at once: the inspector's parser reads them in a few reads.
    const framed = [...body].map((byte) => `1\r\n${byte}\r\n`).join('')
    const socket = connect(Number(port), '127.0.0.1')
    socket.on('error', () => {})
    // Written, not ended: a sender that half-closes before its answer is one that went away.
    socket.write(
      `POST /hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n` +
        `X-Service-Hmac-Signature: ${await sign(body, SECRET)}\r\n\r\n${framed}0\r\n\r\n`,
    )
    const [record] = await waitFor(1)
    socket.destroy()
    expect(record).toMatchObject({ verdict: 'verified', app: { status: 200 } })
    expect(app.seen[0]?.body.toString()).toBe(body)
    // Written on chunk by chunk, the app read 4 000 and more.
    expect(app.seen[0]?.chunks).toBeLessThan(100)
  })

  it('streams a body over the size limit on to the app, keeping only the limit', async () => {
    const app = await recordingApp()
    const { inspector: running, waitFor } = await inspector({ forwardTo: app.url, maxBodySize: 1024 })
    const big = 'x'.repeat(10_000)
    await send(`${running.receiveUrl}/hooks`, {
      headers: { 'x-service-hmac-signature': await sign(big, SECRET) },
      chunks: [big.slice(0, 5000), big.slice(5000)],
    })
    expect(app.seen[0]?.body.byteLength).toBe(10_000)
    const [record] = await waitFor(1)
    expect(record).toMatchObject({ verdict: 'refused', code: 'payload_too_large', bodyBytes: 10_000 })
    expect(record?.body.byteLength).toBe(1024)
  })

  it('shows a delivery the app handed off to a queue as queued, with its job id', async () => {
    const jobs: string[] = []
    const queue = {
      async enqueue(job: { id: string }) {
        jobs.push(job.id)
        return { jobId: job.id, duplicate: false }
      },
    }
    const appUrl = await hookguardApp({ auth: { mode: 'secret', secret: SECRET }, handoff: { queue } })
    const { inspector: running, waitFor } = await inspector({ forwardTo: appUrl })
    const answer = await send(`${running.receiveUrl}/hooks`, {
      headers: { 'x-service-hmac-signature': await sign(BODY, SECRET) },
      chunks: [BODY],
    })
    expect(answer.status).toBe(202)
    const [record] = await waitFor(1)
    expect(jobs).toHaveLength(1)
    expect(record).toMatchObject({ verdict: 'verified', app: { status: 202, jobId: jobs[0] } })
    expect(record?.disagreement).toBeUndefined()
    expect(jsonLine(record as InspectedRecord)).toMatchObject({ verdict: 'verified', appStatus: 202, queuedJob: jobs[0] })
  })

  it('takes a job id only from a 2xx answer that looks like a hand-off, and only when it looks like an id', async () => {
    for (const [status, body] of [
      [202, '{"queued":true,"jobId":"$(touch pwned)"}'],
      [202, `{"queued":true,"jobId":"${'a'.repeat(200)}"}`],
      [202, '{"queued":"yes","jobId":"hg-1"}'],
      [500, '{"queued":true,"jobId":"hg-1"}'],
    ] as const) {
      const app = await nodeApp((req, res) => {
        req.resume()
        req.on('end', () => res.writeHead(status, { 'content-type': 'application/json' }).end(body))
      })
      const { inspector: running, waitFor } = await inspector({ forwardTo: app.url })
      await send(`${running.receiveUrl}/hooks`, { headers: { 'x-service-hmac-signature': await sign(BODY, SECRET) }, chunks: [BODY] })
      const [record] = await waitFor(1)
      expect(record?.app?.status).toBe(status)
      expect(record?.app?.jobId).toBeUndefined()
      expect(jsonLine(record as InspectedRecord).queuedJob).toBeUndefined()
    }
  })

  it('flags an app that accepts what hookguard refuses', async () => {
    const app = await recordingApp(200)
    const { inspector: running, waitFor } = await inspector({ forwardTo: app.url })
    await send(`${running.receiveUrl}/hooks`, { headers: { 'x-service-hmac-signature': 'ab'.repeat(32) }, chunks: [BODY] })
    const [record] = await waitFor(1)
    expect(record).toMatchObject({ verdict: 'refused', code: 'invalid_signature', disagreement: 'app_accepted' })
  })

  it('flags an app that refuses what hookguard verifies', async () => {
    const app = await recordingApp(401)
    const { inspector: running, waitFor } = await inspector({ forwardTo: app.url })
    await send(`${running.receiveUrl}/hooks`, { headers: { 'x-service-hmac-signature': await sign(BODY, SECRET) }, chunks: [BODY] })
    const [record] = await waitFor(1)
    expect(record).toMatchObject({ verdict: 'verified', disagreement: 'app_refused' })
  })

  it('does not flag a 409 or a 422 of the app, whatever its body: those are the app’s own business', async () => {
    for (const [status, body] of [
      [422, 'Unprocessable'],
      [409, ''],
      [409, '{"message":"already have it"}'],
    ] as const) {
      const app = await nodeApp((req, res) => {
        req.resume()
        req.on('end', () => res.writeHead(status, { 'content-type': 'text/plain' }).end(body))
      })
      const { inspector: running, waitFor } = await inspector({ forwardTo: app.url })
      await send(`${running.receiveUrl}/hooks`, { headers: { 'x-service-hmac-signature': await sign(BODY, SECRET) }, chunks: [BODY] })
      const [record] = await waitFor(1)
      expect(record?.verdict).toBe('verified')
      expect(record?.app?.status).toBe(status)
      expect(record?.disagreement, `${status} ${body}`).toBeUndefined()
    }
  })

  it('still flags a 400, a 401 or a 403 of the app for a delivery hookguard verifies', async () => {
    for (const status of [400, 403]) {
      const app = await recordingApp(status)
      const { inspector: running, waitFor } = await inspector({ forwardTo: app.url })
      await send(`${running.receiveUrl}/hooks`, { headers: { 'x-service-hmac-signature': await sign(BODY, SECRET) }, chunks: [BODY] })
      const [record] = await waitFor(1)
      expect(record?.disagreement, String(status)).toBe('app_refused')
    }
  })

  it('forwards an absolute-form request target as its path and query, and exports it', async () => {
    const app = await recordingApp()
    const { inspector: running, waitFor } = await inspector({ forwardTo: `${app.url}/base` })
    const receive = new URL(running.receiveUrl)
    const signature = await sign(BODY, SECRET)
    const answer = await rawRequest(
      receive,
      `POST http://${receive.host}/hooks?tenant=a HTTP/1.1\r\nHost: ${receive.host}\r\nX-Service-Hmac-Signature: ${signature}\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\nConnection: close\r\n\r\n${BODY}`,
    )
    expect(answer).toMatch(/^HTTP\/1\.1 200/)
    expect(app.seen[0]?.url).toBe('/base/hooks?tenant=a')
    const [record] = await waitFor(1)
    expect(record).toMatchObject({ url: '/hooks?tenant=a', verdict: 'verified' })
    const base = new URL(running.uiUrl).origin
    const har = await send(`${base}/api/records/${record?.id}/export/har`, {
      method: 'GET',
      headers: { 'x-inspect-token': running.accessToken },
    })
    expect(har.status).toBe(200)
    expect(JSON.parse(har.body.toString()).log.entries[0].request.url).toBe(`${app.url}/base/hooks?tenant=a`)
  })

  it('answers 504 when the app sends its headers and then trickles its body past the timeout', async () => {
    const timers: NodeJS.Timeout[] = []
    const trickling = await nodeApp((req, res) => {
      req.resume()
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{')
      timers.push(setInterval(() => res.write(' '), 50))
    })
    try {
      const { inspector: front, waitFor: frontWait } = await inspector({ forwardTo: trickling.url, forwardTimeoutMs: 400 })
      const started = performance.now()
      const answer = await within(5000, send(`${front.receiveUrl}/hooks`, { chunks: [BODY] }))
      expect(answer.status).toBe(504)
      expect(JSON.parse(answer.body.toString())).toMatchObject({ error: 'forward_timeout' })
      expect(performance.now() - started).toBeLessThan(3000)
      const [record] = await frontWait(1)
      expect(record?.app?.error).toBe('timeout')
    } finally {
      for (const timer of timers) clearInterval(timer)
    }
  })

  it('answers 502 when the app is down, and records it', async () => {
    const url = await refusedOrigin()
    const { inspector: running, waitFor } = await inspector({ forwardTo: url })
    const answer = await send(`${running.receiveUrl}/hooks`, { chunks: [BODY] })
    expect(answer.status).toBe(502)
    expect(JSON.parse(answer.body.toString())).toEqual({ error: 'forward_failed', message: 'The app could not be reached.' })
    // The sender is the webhook service: it learns nothing of the app's address.
    expect(answer.body.toString()).not.toContain(new URL(url).port)
    expect(answer.body.toString()).not.toContain('127.0.0.1')
    const [record] = await waitFor(1)
    expect(record?.app?.error).toBe('unreachable')
  })

  it('answers 504 when the app hangs, and serves other requests meanwhile', async () => {
    const hanging = await nodeApp((req, res) => {
      if (req.url === '/fast') res.end('ok')
    })
    const { inspector: running, waitFor } = await inspector({ forwardTo: hanging.url, forwardTimeoutMs: 400 })
    const slow = send(`${running.receiveUrl}/hang`, { chunks: [BODY] })
    const fast = await send(`${running.receiveUrl}/fast`, { chunks: [BODY] })
    expect(fast.status).toBe(200)
    const timedOut = await slow
    expect(timedOut.status).toBe(504)
    expect(JSON.parse(timedOut.body.toString())).toEqual({ error: 'forward_timeout', message: 'The app did not answer within 400 ms.' })
    expect(timedOut.body.toString()).not.toContain(new URL(hanging.url).port)
    const records = await waitFor(2)
    expect(records.find((r) => r.url === '/hang')?.app?.error).toBe('timeout')
  })

  it('hands a large answer back whole, streamed past the part held, and records its first 64 KiB', async () => {
    const big = Buffer.alloc(300 * 1024, 0x62)
    const app = await nodeApp((req, res) => {
      req.resume()
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' })
        for (let at = 0; at < big.byteLength; at += 16 * 1024) res.write(big.subarray(at, at + 16 * 1024))
        res.end()
      })
    })
    const { inspector: running, waitFor } = await inspector({ forwardTo: app.url })
    const answer = await send(`${running.receiveUrl}/hooks`, { chunks: [BODY] })
    expect(answer.status).toBe(200)
    expect(answer.body.equals(big)).toBe(true)
    const [record] = await waitFor(1)
    expect(record?.app?.body.byteLength).toBe(64 * 1024)
  })

  it('answers 502 when the app breaks its connection half-way through its answer', async () => {
    const app = await nodeApp((req, res) => {
      req.resume()
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' })
      res.write('{"partial":')
      setTimeout(() => res.destroy(), 50)
    })
    const { inspector: running, waitFor } = await inspector({ forwardTo: app.url })
    const answer = await within(5000, send(`${running.receiveUrl}/hooks`, { chunks: [BODY] }))
    expect(answer.status).toBe(502)
    const [record] = await waitFor(1)
    expect(record?.app?.error).toBe('unreachable')
  })

  it('answers 408 to a chunked body that never ends, in front of an app as well as alone', async () => {
    const app = await recordingApp()
    for (const options of [{}, { forwardTo: app.url }]) {
      const { inspector: running, waitFor } = await inspector({ ...options, bodyTimeoutMs: 300 })
      const started = performance.now()
      const answer = await within(5000, endlessBody(new URL(running.receiveUrl)))
      expect(answer).toMatch(/^HTTP\/1\.1 408/)
      expect(performance.now() - started).toBeLessThan(3000)
      const [record] = await waitFor(1)
      // Refused, as the sender was answered, for time: nothing judged, so no diagnosis and no disagreement.
      expect(record).toMatchObject({ verdict: 'refused', status: 408, code: 'request_timeout' })
      expect(record?.diagnosis).toBeUndefined()
      expect(record?.disagreement).toBeUndefined()
      expect(jsonLine(record as InspectedRecord)).toMatchObject({ type: 'delivery', verdict: 'refused', code: 'request_timeout' })
    }
    expect(app.seen).toHaveLength(0)
  })

  it('passes on an answer the app gave before an endless body ended, then closes the connection', async () => {
    const app = await nodeApp((_req, res) => {
      res.writeHead(413, { 'content-type': 'application/json' }).end('{"error":"too_slow"}')
    })
    const { inspector: running, waitFor } = await inspector({ forwardTo: app.url, bodyTimeoutMs: 300 })
    const answer = await within(5000, endlessBody(new URL(running.receiveUrl)))
    expect(answer).toMatch(/^HTTP\/1\.1 413/)
    const [record] = await waitFor(1)
    expect(record).toMatchObject({ status: 408, code: 'request_timeout', app: { status: 413 } })
    expect(record?.disagreement).toBeUndefined()
  })

  it('shows the app’s dedupe: a replayed delivery gets 409 while the first is handled', async () => {
    const appUrl = await hookguardApp({ auth: { mode: 'secret', secret: SECRET }, dedupe: {} }, 300)
    const { inspector: running, waitFor } = await inspector({ forwardTo: appUrl })
    const headers = { 'x-service-hmac-signature': await sign(BODY, SECRET) }
    const answers = await Promise.all([1, 2].map(() => send(`${running.receiveUrl}/hooks`, { headers, chunks: [BODY] })))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409])
    const records = await waitFor(2)
    expect(records.map((r) => r.duplicate)).toContain('processing')
    expect(records.every((r) => r.disagreement === undefined)).toBe(true)
  })
})

describe('the page’s server', () => {
  async function ui() {
    const { inspector: running } = await inspector()
    const base = new URL(running.uiUrl).origin
    return { running, base, token: running.accessToken }
  }

  it('answers 421 to a foreign Host (DNS rebinding)', async () => {
    const { base, token } = await ui()
    const answer = await send(`${base}/api/state`, { method: 'GET', headers: { host: 'evil.example:80', 'x-inspect-token': token } })
    expect(answer.status).toBe(421)
  })

  it('answers 401 to every API call without the access token in its header, or with a wrong one', async () => {
    const { base } = await ui()
    for (const path of ['/api/state', '/api/records/1', '/api/events', '/api/records/1/export/curl']) {
      expect((await send(`${base}${path}`, { method: 'GET' })).status, path).toBe(401)
      expect((await send(`${base}${path}`, { method: 'GET', headers: { 'x-inspect-token': 'wrong' } })).status, path).toBe(401)
    }
  })

  it('prints its address with the token in the fragment, which no browser sends to a server', async () => {
    const { running } = await ui()
    const url = new URL(running.uiUrl)
    expect(url.pathname).toBe('/')
    expect(url.search).toBe('')
    expect(url.hash).toBe(`#token=${running.accessToken}`)
  })

  it('serves the page shell without the token, and no data with it', async () => {
    const { base } = await ui()
    const page = await send(`${base}/`, { method: 'GET' })
    expect(page.status).toBe(200)
    expect(page.headers['content-security-policy']).toBe(CSP)
    expect(page.headers['set-cookie']).toBeUndefined()
    expect(page.body.toString()).not.toMatch(/<script>[^<]/)
    for (const path of ['/app.js', '/app.css']) expect((await send(`${base}${path}`, { method: 'GET' })).status, path).toBe(200)
  })

  it('answers 401 to a request that carries only a cookie, whatever it holds', async () => {
    const { running, base } = await ui()
    const port = new URL(base).port
    for (const cookie of [
      `hookguard_inspect_${port}=${running.accessToken}`,
      `hookguard_inspect_${port}=x`,
      `token=${running.accessToken}`,
    ]) {
      expect((await send(`${base}/api/state`, { method: 'GET', headers: { cookie } })).status, cookie).toBe(401)
    }
  })

  it('gives a server the browser visits nothing to replay: without the token header, no resend and no record', async () => {
    // Another server on 127.0.0.1 receives the browser's cookies for this host (any port) and
    // replays them from its own side, with no Origin. The page sets none, and none opens the API.
    const { inspector: running, waitFor } = await inspector({ deliver })
    const base = new URL(running.uiUrl).origin
    await send(`${running.receiveUrl}/hooks`, { headers: { 'x-service-hmac-signature': await sign(BODY, SECRET) }, chunks: [BODY] })
    await waitFor(1)
    const cookies: string[] = []
    for (const path of ['/', `/?token=${running.accessToken}`, `/#token=${running.accessToken}`]) {
      const answer = await send(`${base}${path}`, { method: 'GET' })
      for (const cookie of [answer.headers['set-cookie'] ?? []].flat()) cookies.push(cookie.split(';')[0] as string)
    }
    expect(cookies).toEqual([])
    const cookie = `hookguard_inspect_${new URL(base).port}=anything`
    const resend = await send(`${base}/api/resend`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      chunks: [JSON.stringify({ path: '/webhooks', body: '{"event":"order.paid","to":"attacker"}' })],
    })
    expect(resend.status).toBe(401)
    for (const path of ['/api/state', '/api/records/1', '/api/records/1/export/curl']) {
      expect((await send(`${base}${path}`, { method: 'GET', headers: { cookie } })).status, path).toBe(401)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(await waitFor(1)).toHaveLength(1)
  })

  it('keeps two inspectors apart: each one’s token opens its own API only', async () => {
    const one = await ui()
    const two = await ui()
    expect((await send(`${one.base}/api/state`, { method: 'GET', headers: { 'x-inspect-token': one.token } })).status).toBe(200)
    expect((await send(`${two.base}/api/state`, { method: 'GET', headers: { 'x-inspect-token': one.token } })).status).toBe(401)
  })

  it('takes an action from its page opened at localhost or 127.0.0.1, whichever name the request is sent to', async () => {
    const { base, token } = await ui()
    const port = new URL(base).port
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      for (const origin of [`http://localhost:${port}`, `http://127.0.0.1:${port}`, `http://[::1]:${port}`]) {
        const answer = await send(`${base}/api/records`, { method: 'DELETE', headers: { host, origin, 'x-inspect-token': token } })
        expect(answer.status, `${host} ${origin}`).toBe(200)
      }
    }
  })

  it('refuses an action from any other origin, a name that resolves to this machine or another port included', async () => {
    const { base, token } = await ui()
    const port = new URL(base).port
    for (const origin of [
      `http://evil.test:${port}`,
      `http://localhost.evil.test:${port}`,
      `http://localhost:${Number(port) + 1}`,
      `https://localhost:${port}`,
      `http://localhost`,
      'null',
    ]) {
      const answer = await send(`${base}/api/records`, { method: 'DELETE', headers: { origin, 'x-inspect-token': token } })
      expect(answer.status, origin).toBe(403)
    }
    for (const host of [`evil.test:${port}`, `localhost:${Number(port) + 1}`]) {
      const answer = await send(`${base}/api/records`, { method: 'DELETE', headers: { host, 'x-inspect-token': token } })
      expect(answer.status, host).toBe(421)
    }
  })

  it('refuses an action from a foreign Origin', async () => {
    const { base, token } = await ui()
    const answer = await send(`${base}/api/records`, {
      method: 'DELETE',
      headers: { 'x-inspect-token': token, origin: 'http://evil.example' },
    })
    expect(answer.status).toBe(403)
    const ours = await send(`${base}/api/records`, {
      method: 'DELETE',
      headers: { 'x-inspect-token': token, origin: new URL(base).origin },
    })
    expect(ours.status).toBe(200)
  })

  it('resends, signed, only to the receiving address, whatever path the recorded delivery had', async () => {
    const elsewhere: IncomingMessage[] = []
    const other = await nodeApp((req, res) => {
      elsewhere.push(req)
      res.writeHead(204).end()
    })
    const { inspector: running } = await inspector({ deliver })
    const base = new URL(running.uiUrl).origin
    const host = new URL(other.url).host
    for (const path of [`//${host}/x`, `/\\${host}/x`, `/\\/${host}/x`]) {
      const answer = await send(`${base}/api/resend`, {
        method: 'POST',
        headers: { 'x-inspect-token': running.accessToken, origin: new URL(base).origin, 'content-type': 'application/json' },
        chunks: [JSON.stringify({ path, body: '{"event":"ping"}' })],
      })
      expect(answer.status, path).toBe(400)
    }
    expect(elsewhere).toHaveLength(0)
  })

  it('refuses, for resend and presets alike, a path with whitespace or a control character, or one that leaves the receiving address', async () => {
    const elsewhere: IncomingMessage[] = []
    const other = await nodeApp((req, res) => {
      elsewhere.push(req)
      res.writeHead(204).end()
    })
    const { inspector: running } = await inspector({ deliver })
    const base = new URL(running.uiUrl).origin
    const host = new URL(other.url).host
    const headers = { 'x-inspect-token': running.accessToken, origin: base, 'content-type': 'application/json' }
    const paths = ['/a b', '/\t/x', '/\u0000', '/\r\nX-Injected: 1', '/x\u007f', 'hooks', `//${host}/a`, `/\\${host}/a`]
    for (const path of paths) {
      for (const [action, body] of [
        ['resend', { path, body: '{"event":"ping"}' }],
        ['preset', { name: 'no_header', path, body: '{"event":"ping"}' }],
      ] as const) {
        const answer = await send(`${base}/api/${action}`, { method: 'POST', headers, chunks: [JSON.stringify(body)] })
        expect(answer.status, `${action} ${JSON.stringify(path)}`).toBe(400)
        expect(JSON.parse(answer.body.toString()), `${action} ${JSON.stringify(path)}`).toMatchObject({ error: 'invalid_path' })
      }
    }
    expect(elsewhere).toHaveLength(0)
    // A path of the receiving address, its query included, is taken by both.
    for (const action of ['resend', 'preset']) {
      const body = { name: 'no_header', path: '/hooks/a%20b?x=1', body: '{"event":"ping"}' }
      expect((await send(`${base}/api/${action}`, { method: 'POST', headers, chunks: [JSON.stringify(body)] })).status, action).toBe(200)
    }
  })

  it('gets each preset, whatever the body composed, the refusal it promises, or says why it cannot', async () => {
    const modes = [
      { mode: 'secret', secret: SECRET },
      { mode: 'basic', username: 'hook-user', password: 'hook-password-0123' },
      { mode: 'oauth2', appId: 'app-1', secret: 'app-secret-for-tests-0123456789ab' },
      { mode: 'none' },
    ] as const
    const bodies = [
      '{"event":"order.paid","data":{"note":"5 < 6","url":"https://x.example/?a=1&b=2"}}',
      '{"x":1}',
      '{}',
      '{"event": "ping"}',
    ]
    for (const auth of modes) {
      const { inspector: running, waitFor } = await inspector({ auth, deliver })
      const base = new URL(running.uiUrl).origin
      const headers = { 'x-inspect-token': running.accessToken, origin: base, 'content-type': 'application/json' }
      let recorded = 0
      for (const preset of presetsFor(auth.mode)) {
        for (const body of bodies) {
          const what = `${auth.mode} ${preset.name} ${body}`
          const answer = await send(`${base}/api/preset`, {
            headers,
            chunks: [JSON.stringify({ name: preset.name, path: '/hooks', body })],
          })
          const said = JSON.parse(answer.body.toString()) as {
            answers?: { status: number; code?: string }[]
            error?: string
            message?: string
          }
          if (answer.status === 400) {
            // The first body gives every preset something to break.
            expect(body, what).not.toBe(bodies[0])
            expect(said, what).toMatchObject({ error: 'preset_not_applicable', message: expect.stringMatching(/\S/) })
            continue
          }
          expect(answer.status, what).toBe(200)
          const [, status, code, kind, name] = /^(\d{3}) (\w+)(?:, (diagnosis|hint) (\w+))?$/.exec(preset.expected) ?? []
          expect(said.answers, what).toEqual([{ status: Number(status), code }])
          const record = (await waitFor(++recorded)).at(-1)
          if (kind === 'diagnosis') expect(record?.diagnosis?.match?.variant, what).toBe(name)
          if (kind === 'hint') expect(record?.hint, what).toBe(name)
        }
      }
    }
  })

  it('never sends a secret to the page', async () => {
    const { running, base, token } = await ui()
    await send(`${running.receiveUrl}/hooks`, { headers: { 'x-service-hmac-signature': await sign(BODY, SECRET) }, chunks: [BODY] })
    await new Promise((resolve) => setTimeout(resolve, 100))
    const state = await send(`${base}/api/state`, { method: 'GET', headers: { 'x-inspect-token': token } })
    const one = await send(`${base}/api/records/1`, { method: 'GET', headers: { 'x-inspect-token': token } })
    for (const text of [state.body.toString(), one.body.toString()]) expect(text).not.toContain(SECRET)
  })
})

describe('hookguard inspect --json', () => {
  it('writes ready once both sockets listen, then one line per delivery', async () => {
    const lines: string[] = []
    const controller = new AbortController()
    const io = {
      stdout: { write: (text: string) => lines.push(...text.split('\n').filter((l) => l !== '')) },
      stderr: { write: () => {} },
      env: { HOOKGUARD_SECRET: `${SECRET},older-secret` },
      signal: controller.signal,
    }
    const done = inspectCommand(['--json', '--port', '0', '--ui-port', '0'], io)
    while (lines.length === 0) await new Promise((resolve) => setTimeout(resolve, 20))
    const ready = JSON.parse(lines[0] as string) as { type: string; receive: string; ui: string }
    expect(ready).toEqual({
      type: 'ready',
      receive: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      ui: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]+$/),
    })
    // Both listen by then.
    expect(
      (await send(`${ready.receive}/hooks`, { chunks: [BODY], headers: { 'x-service-hmac-signature': await sign(BODY, 'older-secret') } }))
        .status,
    ).toBe(200)
    expect((await send(ready.ui, { method: 'GET' })).status).toBe(200)
    await send(`${ready.receive}/hooks?access_token=abc`, { chunks: [BODY], headers: { 'x-service-hmac-signature': 'zz' } })
    while (lines.length < 3) await new Promise((resolve) => setTimeout(resolve, 20))
    controller.abort()
    expect(await done).toBe(0)
    const [, verified, refused] = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(verified).toEqual({ type: 'delivery', id: 1, method: 'POST', path: '/hooks', mode: 'secret', verdict: 'verified' })
    expect(refused).toEqual({
      type: 'delivery',
      id: 2,
      method: 'POST',
      path: '/hooks',
      mode: 'secret',
      verdict: 'refused',
      code: 'invalid_signature',
      hint: 'header_not_hex',
      diagnosis: 'no_match',
    })
    expect(lines.join('\n')).not.toContain('abc')
  })
})

/** `hookguard inspect` without --json, as a terminal shows it: its lines, stopped by `stop()`. */
function terminal(args: string[], env: Record<string, string> = { HOOKGUARD_SECRET: SECRET }) {
  const lines: string[] = []
  const errors: string[] = []
  const controller = new AbortController()
  const done = inspectCommand(args, {
    stdout: { write: (text: string) => lines.push(...text.split('\n').filter((l) => l !== '')) },
    stderr: { write: (text: string) => errors.push(text) },
    env,
    signal: controller.signal,
  })
  /** Resolves once `check` holds, or throws after 5 s with what was printed. */
  const until = async (check: () => boolean): Promise<void> => {
    const deadline = Date.now() + 5_000
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`not printed in 5 s: ${lines.join(' | ')}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  const stop = () => {
    controller.abort()
    return done
  }
  return { lines, errors, done, until, stop }
}

describe('hookguard inspect, on a terminal', () => {
  it('names the diagnosis on the line of a refused delivery, as the page and --json do', async () => {
    const run = terminal(['--port', '0', '--ui-port', '0'])
    await run.until(() => run.lines.some((line) => line.startsWith('Receiving on')))
    const receive = /http:\/\/127\.0\.0\.1:\d+/.exec(run.lines.join('\n'))?.[0]
    // Signed with the secret and a trailing newline, as a secret pasted from a file often is.
    await send(`${receive}/hooks?access_token=abc`, {
      headers: { 'x-service-hmac-signature': await sign(BODY, `${SECRET}\n`) },
      chunks: [BODY],
    })
    await run.until(() => run.lines.some((line) => line.startsWith('refused')))
    expect(await run.stop()).toBe(0)
    const line = run.lines.find((l) => l.startsWith('refused'))
    expect(line).toBe('refused   POST /hooks  invalid_signature  diagnosis secret_newline')
  })

  it.each([
    ['--port', 'the receiving port'],
    ['--ui-port', "the page's port"],
  ])('names the port taken and the flag that sets it (%s), and exits 1', async (flag, what) => {
    const { url } = await nodeApp((_req, res) => res.end())
    const taken = new URL(url).port
    const args = ['--port', '0', '--ui-port', '0']
    args[args.indexOf(flag) + 1] = taken
    const run = terminal(args)
    expect(await run.done).toBe(1)
    expect(run.errors.join('')).toBe(
      `hookguard: cannot listen on 127.0.0.1:${taken} (${what}, set by ${flag}): EADDRINUSE: another program holds it; choose another with ${flag} <n> (0: any free port)\n`,
    )
  })

  it('refuses one port for both servers before listening', async () => {
    await expect(
      inspectCommand(['--port', '4400', '--ui-port', '4400'], {
        stdout: { write: () => {} },
        stderr: { write: () => {} },
        env: { HOOKGUARD_SECRET: SECRET },
      }),
    ).rejects.toThrow(/^@hookguard\/inspect: --port and --ui-port must differ/)
  })

  it('receives and serves its page by default on ports no common development tool takes, and says so in its help', () => {
    // Next.js, Rails, Express (3000), Phoenix, Jekyll (4000), ngrok's inspector (4040), Angular (4200), Astro (4321),
    // OpenTelemetry (4317, 4318), Flask (5000), Vite (5173, 4173), Storybook (6006), Django (8000),
    // 8080, wrangler dev (8787), Jupyter, Netlify dev (8888), 9000, the Node inspector (9229).
    const taken = [3000, 3001, 4000, 4040, 4173, 4200, 4317, 4318, 4321, 5000, 5173, 6006, 8000, 8080, 8787, 8888, 9000, 9229]
    for (const port of [DEFAULT_PORT, DEFAULT_UI_PORT]) {
      expect(taken).not.toContain(port)
      // Not in the range systems lend to outgoing connections (Linux 32768–60999, IANA 49152–65535).
      expect(port).toBeLessThan(32768)
      expect(INSPECT_HELP).toContain(`(default: ${port})`)
    }
  })
})

/** Fails when `promise` takes longer than `ms`: a hang is a failure, not a test timeout. */
function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

/** Writes `text` on a new connection and reads until the server closes it. */
function rawRequest(url: URL, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(text))
    let answer = ''
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1')
    })
    socket.on('end', () => resolve(answer))
    socket.on('error', reject)
  })
}

/** A chunked body that sends one chunk and then a byte now and then, never its end; resolves what was answered. */
function endlessBody(url: URL): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = ''
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(`POST /hooks HTTP/1.1\r\nHost: ${url.host}\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n`)
    })
    const drip = setInterval(() => {
      if (!socket.destroyed) socket.write('1\r\n \r\n')
    }, 50)
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1')
    })
    socket.on('close', () => {
      clearInterval(drip)
      resolve(answer)
    })
    socket.on('error', (error: NodeJS.ErrnoException) => {
      clearInterval(drip)
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') resolve(answer)
      else reject(error)
    })
  })
}
