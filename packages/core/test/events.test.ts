import { createHash } from 'node:crypto'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { createReceiver, type IncomingRequest, sign, type WebhookEvent, type WebhookOptions } from '@hookguard/core'
import { formatBasicAuthorization } from '@hookguard/core/adapter'
import { afterEach, describe, expect, it, vi } from 'vitest'

const SECRET = 'whsec-events-canary-41c9'
const PASSWORD = 'basic-events-canary-77f0'
const APP = { mode: 'oauth2', appId: 'wx-app-events', secret: 'oauth-events-canary-2d8b' } as const
const COMPACT = '{"event":"customer.created","data":{"id":7,"name":"王 小明","note":"a<b"}}'
const PRETTY = '{\n  "event": "customer.created",\n  "data": { "id": 7, "name": "王 小明", "note": "a<b" }\n}'
const GSON = COMPACT.replace('<', '\\u003c')

const post = (body: string, headers: Record<string, string> = {}, url = '/hooks'): IncomingRequest => ({
  method: 'POST',
  url,
  headers,
  body,
})
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const javaStripped = (text: string) => text.replace(/[ \t\n\v\f\r]/g, '')

/** A receiver whose events are collected. */
function recording(options: WebhookOptions) {
  const events: WebhookEvent[] = []
  const receiver = createReceiver({ ...options, onEvent: (event) => events.push(event) })
  return { receiver, events }
}

async function fingerprintOf(options: WebhookOptions, request: IncomingRequest): Promise<string> {
  const result = await createReceiver(options).verify(request)
  if (!result.ok) throw new Error(`refused: ${result.response.body}`)
  return result.delivery.fingerprint
}

describe('delivery.fingerprint', () => {
  it('is the SHA-256 of the text the signature covers, the same for every whitespace variant of one delivery', async () => {
    const auth = { mode: 'secret', secret: SECRET } as const
    const signature = { 'x-service-hmac-signature': await sign(COMPACT, SECRET) }
    const compact = await fingerprintOf({ auth }, post(COMPACT, signature))
    expect(compact).toBe(sha256(javaStripped(COMPACT)))
    expect(await fingerprintOf({ auth }, post(PRETTY, signature))).toBe(compact)
  })

  it('is the hash of the Gson form when that form matched, so an escaped and an unescaped body are one delivery', async () => {
    const auth = { mode: 'secret', secret: SECRET } as const
    const signature = { 'x-service-hmac-signature': await sign(GSON, SECRET) }
    const unescaped = await fingerprintOf({ auth }, post(COMPACT, signature))
    expect(unescaped).toBe(sha256(javaStripped(GSON)))
    expect(await fingerprintOf({ auth }, post(GSON, signature))).toBe(unescaped)
  })

  it('is the hash of the bytes received in the modes without a signature, where whitespace inside strings is content', async () => {
    const none = { auth: { mode: 'none' } } as const
    expect(await fingerprintOf(none, post(PRETTY))).toBe(sha256(PRETTY))
    expect(await fingerprintOf(none, post('{"name":"Ann Lee"}'))).not.toBe(await fingerprintOf(none, post('{"name":"AnnLee"}')))
    expect(await fingerprintOf(none, post(COMPACT.replace('7', '8')))).not.toBe(sha256(COMPACT))
  })
})

describe('onEvent', () => {
  it("reports a verified delivery with the form its signature covered: the service's own or a compatibility form", async () => {
    const { receiver, events } = recording({ auth: { mode: 'secret', secret: SECRET, unicodeWhitespace: true } })
    await receiver.verify(post(PRETTY, { 'x-service-hmac-signature': await sign(COMPACT, SECRET) }))
    await receiver.verify(post(COMPACT, { 'x-service-hmac-signature': await sign(GSON, SECRET) }))
    await receiver.verify(post(COMPACT.replace('a<b', 'a\u00a0<b'), { 'x-service-hmac-signature': await sign(COMPACT, SECRET) }))
    expect(events.map((event) => event.type === 'verified' && event.form)).toEqual(['service', 'gson', 'unicode'])
    expect(events[0]).toEqual({
      type: 'verified',
      mode: 'secret',
      form: 'service',
      fingerprint: sha256(javaStripped(COMPACT)),
      bodyBytes: Buffer.byteLength(PRETTY),
      durationMs: expect.any(Number),
    })
  })

  it('reports each refusal with its code, status, mode and the bytes read, and a hint for a signature that does not match', async () => {
    const { receiver, events } = recording({ auth: { mode: 'secret', secret: [`${SECRET}\n`, SECRET] }, maxBodySize: 100 })
    await receiver.verify(post(COMPACT))
    await receiver.verify(post(COMPACT, { 'x-service-hmac-signature': 'zz'.repeat(32) }))
    await receiver.verify(post(COMPACT, { 'x-service-hmac-signature': 'ab'.repeat(20) }))
    await receiver.verify(post(COMPACT, { 'x-service-hmac-signature': 'ab'.repeat(32) }))
    await receiver.verify(post('x'.repeat(200), { 'content-length': '200', 'x-service-hmac-signature': 'ab'.repeat(32) }))
    expect(events).toEqual([
      {
        type: 'rejected',
        mode: 'secret',
        code: 'missing_signature',
        status: 401,
        // Refused before its body was read: the body is discarded, not counted.
        durationMs: expect.any(Number),
      },
      ...['header_not_hex', 'header_wrong_length', 'secret_whitespace'].map((hint) => ({
        type: 'rejected',
        mode: 'secret',
        code: 'invalid_signature',
        status: 401,
        bodyBytes: Buffer.byteLength(COMPACT),
        hint,
        durationMs: expect.any(Number),
      })),
      { type: 'rejected', mode: 'secret', code: 'payload_too_large', status: 413, durationMs: expect.any(Number) },
    ])
  })

  it('gives no hint for a tenant with no secret: there is no secret for the header to be compared with', async () => {
    const { receiver, events } = recording({ auth: { mode: 'secret', secret: () => [] } })
    await receiver.verify(post(COMPACT, { 'x-service-hmac-signature': 'zz'.repeat(32) }))
    expect(events).toEqual([expect.objectContaining({ type: 'rejected', code: 'invalid_signature' })])
    expect(events[0]).not.toHaveProperty('hint')
  })

  it('hints that a body that is not Gson output may have been re-serialised', async () => {
    const { receiver, events } = recording({ auth: { mode: 'secret', secret: SECRET } })
    await receiver.verify(post(COMPACT, { 'x-service-hmac-signature': await sign(COMPACT, 'another secret') }))
    await receiver.verify(post(GSON, { 'x-service-hmac-signature': await sign(GSON, 'another secret') }))
    expect(events.map((event) => event.type === 'rejected' && event.hint)).toEqual(['body_not_gson', undefined])
  })

  it('reports the token address: a token issued, and a request refused', async () => {
    const { receiver, events } = recording({ auth: APP })
    const tokens = createReceiver({ auth: APP }, { role: 'token' })
    expect(tokens).toBeDefined()
    const url = (secret: string) => `/token?appid=${APP.appId}&secret=${secret}&grant_type=client_credentials`
    await receiver.token({ method: 'GET', url: url(APP.secret), headers: {}, body: null })
    await receiver.token({ method: 'GET', url: url('wrong'), headers: {}, body: null })
    expect(events).toEqual([
      { type: 'token_issued', mode: 'oauth2', expiresIn: 7200, durationMs: expect.any(Number) },
      { type: 'token_refused', mode: 'oauth2', code: 'invalid_client', status: 401, durationMs: expect.any(Number) },
    ])
  })

  it('never carries a secret, password, token, query string or body, in any mode', async () => {
    const events: WebhookEvent[] = []
    const onEvent = (event: WebhookEvent) => events.push(event)
    const basic = createReceiver({ auth: { mode: 'basic', username: 'hook', password: PASSWORD }, onEvent })
    await basic.verify(post(COMPACT, { authorization: formatBasicAuthorization('hook', PASSWORD) }))
    await basic.verify(post(COMPACT, { authorization: formatBasicAuthorization('hook', `${PASSWORD}x`) }))
    const oauth = createReceiver({ auth: APP, onEvent })
    const issued = await oauth.token({
      method: 'GET',
      url: `/t?appid=${APP.appId}&secret=${APP.secret}&grant_type=client_credentials`,
      headers: {},
      body: null,
    })
    const token = (JSON.parse(issued.body) as { access_token: string }).access_token
    await oauth.verify(post(COMPACT, {}, `/hooks?access_token=${token}`))
    await oauth.verify(post(COMPACT, {}, `/hooks?access_token=${token}x&other=query-canary`))
    const secret = createReceiver({ auth: { mode: 'secret', secret: SECRET }, onEvent })
    await secret.verify(post(COMPACT, { 'x-service-hmac-signature': await sign(COMPACT, SECRET) }))
    expect(events.map((event) => event.type)).toEqual(['verified', 'rejected', 'token_issued', 'verified', 'rejected', 'verified'])
    const text = JSON.stringify(events)
    for (const sensitive of [PASSWORD, APP.secret, SECRET, token, 'query-canary', 'customer.created', '王'])
      expect(text).not.toContain(sensitive)
  })

  it('never changes the answer when the listener throws or rejects', async () => {
    const report = vi.spyOn(console, 'error').mockImplementation(() => {})
    for (const onEvent of [
      () => {
        throw new Error('listener bug')
      },
      (() => Promise.reject(new Error('async listener bug'))) as unknown as () => undefined,
    ]) {
      const receiver = createReceiver({ auth: { mode: 'secret', secret: SECRET }, onEvent })
      const good = await receiver.verify(post(COMPACT, { 'x-service-hmac-signature': await sign(COMPACT, SECRET) }))
      const bad = await receiver.verify(post(COMPACT))
      expect(good.ok).toBe(true)
      expect(bad.ok || bad.response.status).toBe(401)
    }
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(report).toHaveBeenCalledTimes(4)
    expect(String(report.mock.calls[0]?.[0])).toContain('@hookguard/core: the onEvent listener threw')
    report.mockRestore()
  })

  it('refuses a listener that is not a function at setup', () => {
    expect(() => createReceiver({ auth: { mode: 'none' }, onEvent: 'log' as never })).toThrow(
      new TypeError('@hookguard/core: onEvent must be a function'),
    )
  })
})

describe('diagnostics channels', () => {
  const seen: unknown[] = []
  const record = (message: unknown) => seen.push(message)
  afterEach(() => {
    unsubscribe('hookguard:rejected', record)
    seen.length = 0
  })

  it(`publishes every event on hookguard:<type> on Node, and nowhere on the Web build`, async () => {
    subscribe('hookguard:rejected', record)
    await createReceiver({ auth: { mode: 'secret', secret: SECRET } }).verify(post(COMPACT))
    if (process.env.EXPECTED_CRYPTO === 'web') expect(seen).toEqual([])
    else expect(seen).toEqual([expect.objectContaining({ type: 'rejected', code: 'missing_signature' })])
  })
})
