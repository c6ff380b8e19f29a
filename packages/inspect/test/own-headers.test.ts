import type { IncomingMessage } from 'node:http'
import { sign } from '@hookguard/core'
import { afterEach, describe, expect, it } from 'vitest'
import { SOURCE_HEADER } from '../src/source-mark.ts'
import { TOKEN_HEADER } from '../src/ui.ts'
import { jsonLine } from '../src/view.ts'
import { cleanup, hookguardApp, inspector, nodeApp, SECRET, send } from './helpers.ts'

afterEach(cleanup)

const BODY = '{"event":"order.paid"}'

/** An app that keeps the raw header lines it received. */
async function recordingApp() {
  const seen: string[][] = []
  const app = await nodeApp((req: IncomingMessage, res) => {
    req.resume()
    req.on('end', () => {
      seen.push(req.rawHeaders)
      res.end('{"ok":true}')
    })
  })
  return { ...app, seen }
}

/** Every header the inspector itself sets or reads, with what a sender might write in it. */
const OWN_HEADERS: [string, string[]][] = [
  [SOURCE_HEADER, ['replay', 'resend', 'preset', 'preset;0f8e', 'replay;x;y', 'Replay', ';replay', '']],
  [TOKEN_HEADER, ['replay', 'a'.repeat(32)]],
]

describe('a header the inspector itself sets or reads, sent by a sender', () => {
  for (const [name, values] of OWN_HEADERS) {
    for (const value of values) {
      it(`${name}: ${JSON.stringify(value)} is forwarded untouched and the row says sender`, async () => {
        const app = await recordingApp()
        const { inspector: running, waitFor } = await inspector({ forwardTo: app.url })
        const headers = { 'x-service-hmac-signature': await sign(BODY, SECRET), [name]: value }
        expect((await send(`${running.receiveUrl}/hooks`, { headers, chunks: [BODY] })).status).toBe(200)
        const [record] = await waitFor(1)
        expect(record?.source).toBe('sender')
        const raw = app.seen[0] ?? []
        const at = raw.findIndex((line, i) => i % 2 === 0 && line.toLowerCase() === name)
        expect(at, `${name} reached the app`).toBeGreaterThanOrEqual(0)
        expect(raw[at + 1]).toBe(value)
        expect(record?.headers).toContainEqual([name, value])
      })
    }
  }

  it('is sent again by a replay, beside the page’s own mark, which alone is taken out', async () => {
    const app = await recordingApp()
    const { inspector: running, waitFor } = await inspector({ forwardTo: app.url })
    const headers = { 'x-service-hmac-signature': await sign(BODY, SECRET), [SOURCE_HEADER]: 'replay' }
    await send(`${running.receiveUrl}/hooks`, { headers, chunks: [BODY] })
    await waitFor(1)
    const ui = new URL(running.uiUrl).origin
    const replayed = await send(`${ui}/api/records/1/replay`, {
      headers: { 'x-inspect-token': running.accessToken, 'content-type': 'application/json' },
      chunks: ['{}'],
    })
    expect(replayed.status).toBe(200)
    const [first, second] = await waitFor(2)
    expect(first?.source).toBe('sender')
    expect(second?.source).toBe('replay')
    expect(second?.headers).toContainEqual([SOURCE_HEADER, 'replay'])
    // The app sees the sender's copy once, and nothing of the mark.
    const lines = (app.seen[1] ?? []).filter((_, i, all) => i % 2 === 1 && (all[i - 1] as string).toLowerCase() === SOURCE_HEADER)
    expect(lines).toEqual(['replay'])
  })
})

describe('a header the sender’s Connection header names', () => {
  it('is not sent to the app, and the row says so: the app could not verify what hookguard did', async () => {
    const appUrl = await hookguardApp({ auth: { mode: 'secret', secret: SECRET } })
    const { inspector: running, waitFor } = await inspector({ forwardTo: appUrl })
    const answer = await send(`${running.receiveUrl}/hooks`, {
      headers: { 'X-Service-Hmac-Signature': await sign(BODY, SECRET), connection: 'keep-alive, X-Service-Hmac-Signature, X-Other' },
      chunks: [BODY],
    })
    // RFC 9110 §7.6.1: a proxy drops what Connection names, so the app saw no signature.
    expect(answer.status).toBe(401)
    const [record] = await waitFor(1)
    expect(record).toMatchObject({ verdict: 'verified', disagreement: 'app_refused', notForwarded: ['X-Service-Hmac-Signature'] })
    expect(jsonLine(record as NonNullable<typeof record>)).toMatchObject({ notForwarded: ['X-Service-Hmac-Signature'] })
  })

  it('is not noted when nothing named was received, nor as the receiver (nothing is forwarded)', async () => {
    const app = await recordingApp()
    const front = await inspector({ forwardTo: app.url })
    await send(`${front.inspector.receiveUrl}/hooks`, {
      headers: { 'x-service-hmac-signature': await sign(BODY, SECRET), connection: 'keep-alive, X-Absent' },
      chunks: [BODY],
    })
    const alone = await inspector()
    await send(`${alone.inspector.receiveUrl}/hooks`, {
      headers: { 'x-service-hmac-signature': await sign(BODY, SECRET), connection: 'x-service-hmac-signature' },
      chunks: [BODY],
    })
    expect((await front.waitFor(1))[0]?.notForwarded).toBeUndefined()
    expect((await alone.waitFor(1))[0]).toMatchObject({ verdict: 'verified' })
    expect((await alone.waitFor(1))[0]?.notForwarded).toBeUndefined()
  })
})
