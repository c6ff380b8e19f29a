import { createHash } from 'node:crypto'
import {
  createReceiver,
  DRAIN_MAX_BYTES,
  type IncomingRequest,
  MAX_FORM_FIELDS,
  sign,
  type WebhookEvent,
  type WebhookOptions,
  type WebhookRequest,
} from '@hookguard/core'
import { formatBasicAuthorization, rawBodyUnavailable } from '@hookguard/core/adapter'
import { describe, expect, it, vi } from 'vitest'
import { backend } from '#crypto'

const SECRET = 'whsec-receiver-test'
const BODY = '{"event":"customer.created","data":{"name":"王 小明"}}'
const encode = (text: string) => new TextEncoder().encode(text)

function request(init: Omit<Partial<IncomingRequest>, 'body'> & { body?: IncomingRequest['body'] | string } = {}): IncomingRequest {
  const { body = BODY, ...rest } = init
  return { method: 'POST', url: '/hooks', headers: {}, ...rest, body: typeof body === 'string' ? encode(body) : body }
}

async function signed(body = BODY, secret = SECRET): Promise<Record<string, string>> {
  return { 'x-service-hmac-signature': await sign(body, secret) }
}

/** The refusal a receiver answered, with its JSON body parsed. */
async function refusal(options: WebhookOptions, incoming: IncomingRequest) {
  const result = await createReceiver(options).verify(incoming)
  if (result.ok) throw new Error('expected a refusal')
  return { ...result.response, json: JSON.parse(result.response.body) as { error: string; message: string } }
}

const secretMode: WebhookOptions = { auth: { mode: 'secret', secret: SECRET } }
/** A declared length past what a body reader would drain after a limit of 16 bytes. */
const UNDRAINABLE = String(16 + DRAIN_MAX_BYTES + 1)

const toList = (headers: Record<string, string> | string[]) => (Array.isArray(headers) ? headers : Object.entries(headers).flat())

describe('createReceiver', () => {
  describe("in mode 'secret'", () => {
    it('hands on the parsed payload and the exact bytes received', async () => {
      const body = encode(BODY)
      const result = await createReceiver(secretMode).verify(request({ headers: await signed(), body }))
      const fingerprint = createHash('sha256').update(BODY.replace(/\s/g, '')).digest('hex')
      if (!result.ok) throw new Error(`refused: ${result.response.body}`)
      const { mode, payload, rawBody } = result.delivery
      expect({ mode, payload, rawBody, fingerprint: result.delivery.fingerprint }).toEqual({
        mode: 'secret',
        payload: JSON.parse(BODY),
        rawBody: body,
        fingerprint,
      })
    })

    it('fingerprints the bytes received, even once the application has replaced rawBody', async () => {
      const result = await createReceiver(secretMode).verify(request({ headers: await signed() }))
      if (!result.ok) throw new Error(`refused: ${result.response.body}`)
      result.delivery.rawBody = encode('{"event":"edited"}')
      expect(result.delivery.fingerprint).toBe(createHash('sha256').update(BODY.replace(/\s/g, '')).digest('hex'))
    })

    it('accepts a signature over the body with every Unicode whitespace removed only with unicodeWhitespace: true', async () => {
      const body = '{"name":"李\u3000雷","note":"a\u00A0b"}'
      const headers = { 'x-service-hmac-signature': await sign('{"name":"李雷","note":"ab"}', SECRET) }
      const strict = await refusal(secretMode, request({ headers, body }))
      expect([strict.status, strict.json.error]).toEqual([401, 'invalid_signature'])
      const lenient = { auth: { mode: 'secret', secret: SECRET, unicodeWhitespace: true } } as const
      expect((await createReceiver(lenient).verify(request({ headers, body }))).ok).toBe(true)
    })

    it('reads the signature header whatever its case, from Fetch Headers too', async () => {
      const headers = new Headers({ 'X-SERVICE-HMAC-SIGNATURE': await sign(BODY, SECRET) })
      expect((await createReceiver(secretMode).verify(request({ headers }))).ok).toBe(true)
    })

    it("reads headers from Node's rawHeaders, whatever the case of their names", async () => {
      const headers = ['Host', 'localhost', 'X-Service-HMAC-Signature', await sign(BODY, SECRET), 'Content-Type', 'application/json']
      expect((await createReceiver(secretMode).verify(request({ headers }))).ok).toBe(true)
    })

    it('reads from rawHeaders only the header of that name, not another of the same length', async () => {
      // 'x-service-hmac-signature' has 24 characters, as have these two names.
      const decoys = ['X-Service-Hmac-Signatur3', await sign(BODY, SECRET), 'x-service-hmac-signatureX'.slice(1), 'ignored']
      const answer = await refusal(secretMode, request({ headers: decoys }))
      expect([answer.status, answer.json.error]).toEqual([401, 'missing_signature'])
    })

    it('joins the lines of a repeated header the same from rawHeaders, a header object and Fetch Headers', async () => {
      const signature = await sign(BODY, SECRET)
      const other = await sign(BODY, 'another-secret')
      const sources: IncomingRequest['headers'][] = [
        ['x-service-hmac-signature', other, 'X-Service-Hmac-Signature', signature],
        { 'x-service-hmac-signature': [other, signature] },
        new Headers([
          ['x-service-hmac-signature', other],
          ['x-service-hmac-signature', signature],
        ]),
      ]
      const seen: (string | null)[] = []
      const options: WebhookOptions = {
        auth: {
          mode: 'secret',
          secret: (req) => {
            seen.push(req.header('X-Service-Hmac-Signature'))
            return SECRET
          },
        },
      }
      for (const headers of sources) expect((await createReceiver(options).verify(request({ headers }))).ok).toBe(true)
      expect(seen).toEqual(Array(3).fill(`${other}, ${signature}`))
    })

    for (const [label, headers] of [
      ['missing', {}],
      ['empty', { 'x-service-hmac-signature': '' }],
      ['blank', { 'x-service-hmac-signature': '   ' }],
    ] as const) {
      it(`answers 401 missing_signature when the header is ${label}, whatever the body holds`, async () => {
        // A reader that fails: the verdict is reached without the body.
        const body = vi.fn(async () => {
          throw new Error('the client went away')
        })
        const answer = await refusal(secretMode, request({ headers, body }))
        expect(answer.status).toBe(401)
        expect(answer.json.error).toBe('missing_signature')
      })
    }

    it('answers 401 invalid_signature for a signature by another secret', async () => {
      const answer = await refusal(secretMode, request({ headers: await signed(BODY, 'other') }))
      expect([answer.status, answer.json.error]).toEqual([401, 'invalid_signature'])
    })

    it('answers 401 invalid_signature for a header that is not hex', async () => {
      const answer = await refusal(secretMode, request({ headers: { 'x-service-hmac-signature': 'not-a-signature' } }))
      expect([answer.status, answer.json.error]).toEqual([401, 'invalid_signature'])
    })

    it('answers 401, not 400, for a body that is neither authentic nor JSON: authentication comes first', async () => {
      const answer = await refusal(secretMode, request({ headers: await signed(BODY), body: 'not json' }))
      expect(answer.json.error).toBe('invalid_signature')
    })

    it('answers 400 invalid_json for an authentic body that is not JSON', async () => {
      const answer = await refusal(secretMode, request({ headers: await signed('not json'), body: 'not json' }))
      expect([answer.status, answer.json.error]).toEqual([400, 'invalid_json'])
    })

    it('answers 400 invalid_json for an authentic body nested deeper than maxDepth', async () => {
      const deep = `${'['.repeat(30)}${']'.repeat(30)}`
      const answer = await refusal({ ...secretMode, maxDepth: 10 }, request({ headers: await signed(deep), body: deep }))
      expect([answer.status, answer.json.error]).toEqual([400, 'invalid_json'])
    })

    it('accepts any of several secrets while rotating', async () => {
      const receiver = createReceiver({ auth: { mode: 'secret', secret: ['next', SECRET] } })
      expect((await receiver.verify(request({ headers: await signed() }))).ok).toBe(true)
      expect((await receiver.verify(request({ headers: await signed(BODY, 'next') }))).ok).toBe(true)
    })

    it('resolves a per-tenant secret from the request', async () => {
      const secrets: Record<string, string> = { acme: 'acme-secret', globex: 'globex-secret' }
      const receiver = createReceiver({
        auth: { mode: 'secret', secret: async (req) => secrets[req.url.searchParams.get('tenant') ?? ''] ?? [] },
      })
      const acme = await receiver.verify(request({ url: '/hooks?tenant=acme', headers: await signed(BODY, 'acme-secret') }))
      const crossed = await receiver.verify(request({ url: '/hooks?tenant=globex', headers: await signed(BODY, 'acme-secret') }))
      expect([acme.ok, crossed.ok]).toEqual([true, false])
    })

    for (const [label, found] of [
      ['undefined', undefined],
      ['null', null],
      ["''", ''],
      ['[]', []],
      ["['']", ['']],
    ] as const) {
      it(`answers 401 invalid_signature when a resolver finds no secret (${label}): an unknown tenant`, async () => {
        const receiver = createReceiver({ auth: { mode: 'secret', secret: async () => found } })
        const answer = await receiver.verify(request({ headers: await signed() }))
        expect(answer.ok).toBe(false)
        if (!answer.ok) expect([answer.response.status, answer.error?.code]).toEqual([401, 'invalid_signature'])
      })
    }

    it('rejects when a resolver returns something other than strings, since that is a bug in the application', async () => {
      const receiver = createReceiver({ auth: { mode: 'secret', secret: () => 42 as unknown as string } })
      await expect(receiver.verify(request({ headers: await signed() }))).rejects.toThrow(/^@hookguard\/core: /)
    })

    it('reads the signature from a custom header', async () => {
      const receiver = createReceiver({ ...secretMode, signatureHeader: 'X-Signature' })
      const result = await receiver.verify(request({ headers: { 'x-signature': await sign(BODY, SECRET) } }))
      expect(result.ok).toBe(true)
    })

    it('imports the key for a secret once, not per request', async () => {
      const importKey = vi.spyOn(backend, 'importHmacKey')
      const receiver = createReceiver({ auth: { mode: 'secret', secret: 'imported-once' } })
      const headers = await signed(BODY, 'imported-once')
      for (let i = 0; i < 3; i++) await receiver.verify(request({ headers }))
      expect(importKey).toHaveBeenCalledTimes(1)
      importKey.mockRestore()
    })
  })

  describe('after a refusal, for the connection the request came on', () => {
    const wrongPassword = { auth: { mode: 'basic', username: 'hook-user', password: 'right' } } as const
    const basicHeader = { authorization: formatBasicAuthorization('hook-user', 'wrong') }

    it('reads an unread body only to discard it (a limit of nothing: no byte kept), so the connection can carry the next delivery', async () => {
      const body = vi.fn(async () => encode(BODY))
      const answer = await refusal({ ...wrongPassword, maxBodySize: 1000 }, request({ headers: basicHeader, body }))
      expect(answer.status).toBe(401)
      expect(body).toHaveBeenCalledTimes(1)
      expect(body).toHaveBeenCalledWith(0, undefined)
      expect(answer.headers.connection).toBeUndefined()
    })

    it('hands the reader the Content-Length it checked, so the reader need not parse it again', async () => {
      const body = vi.fn(async () => encode(BODY))
      const length = String(encode(BODY).byteLength)
      const answer = await refusal(
        { ...wrongPassword, maxBodySize: 1000 },
        request({ headers: { ...basicHeader, 'content-length': length }, body }),
      )
      expect(answer.status).toBe(401)
      expect(body).toHaveBeenCalledWith(0, Number(length))
    })

    it('answers Connection: close when the unread body cannot be drained within the limit', async () => {
      const body = vi.fn(async () => {
        throw Object.assign(new Error('request entity too large'), { status: 413 })
      })
      const answer = await refusal(wrongPassword, request({ headers: basicHeader, body }))
      expect([answer.status, answer.json.error]).toEqual([401, 'invalid_credentials'])
      expect(answer.headers.connection).toBe('close')
      expect(answer.headers['www-authenticate']).toMatch(/^Basic /)
    })

    it('answers Connection: close, without reading, when the declared length is over what would be drained', async () => {
      const body = vi.fn(async () => encode(BODY))
      const answer = await refusal({ ...secretMode, maxBodySize: 16 }, request({ headers: { 'content-length': UNDRAINABLE }, body }))
      expect([answer.status, answer.json.error, answer.headers.connection]).toEqual([401, 'missing_signature', 'close'])
      expect(body).not.toHaveBeenCalled()
    })

    it('hands a declared length over the limit to the reader, and keeps the connection once the body was read to its end', async () => {
      const body = vi.fn(async () => encode(BODY))
      const answer = await refusal({ ...secretMode, maxBodySize: 16 }, request({ headers: { 'content-length': '100' }, body }))
      expect([answer.status, answer.json.error, answer.headers.connection]).toEqual([401, 'missing_signature', undefined])
      expect(body).toHaveBeenCalledWith(0, 100)
    })

    it('keeps the connection when the body was read in full', async () => {
      const answer = await refusal(secretMode, request({ headers: await signed(BODY, 'other') }))
      expect([answer.status, answer.headers.connection]).toEqual([401, undefined])
    })

    it('carries Connection: close on the error too, for a framework that answers it', async () => {
      const result = await createReceiver({ ...secretMode, maxBodySize: 16 }).verify(
        request({ headers: { 'content-length': UNDRAINABLE } }),
      )
      expect(result.ok).toBe(false)
      if (!result.ok) expect(result.error?.headers.connection).toBe('close')
    })
  })

  describe('with a Content-Length that cannot be trusted', () => {
    for (const [label, value] of [
      ['two different values', '5, 6'],
      ['a sign', '+5'],
      ['an exponent', '1e3'],
      ['a fraction', '5.0'],
      ['nothing', ''],
      ['hex', '0x10'],
      ['a space inside', '1 0'],
    ] as const) {
      it(`answers 400 invalid_body for ${label} ('${value}'), without reading`, async () => {
        const body = vi.fn(async () => encode(BODY))
        const answer = await refusal(secretMode, request({ headers: { ...(await signed()), 'content-length': value }, body }))
        expect([answer.status, answer.json.error, answer.headers.connection]).toEqual([400, 'invalid_body', 'close'])
        expect(body).not.toHaveBeenCalled()
      })
    }

    it('answers 400 invalid_body for Content-Length with Transfer-Encoding, without reading', async () => {
      const body = vi.fn(async () => encode(BODY))
      const headers = { ...(await signed()), 'content-length': String(BODY.length), 'transfer-encoding': 'chunked' }
      const answer = await refusal(secretMode, request({ headers, body }))
      expect([answer.status, answer.json.error]).toEqual([400, 'invalid_body'])
      expect(body).not.toHaveBeenCalled()
    })

    it('answers 413 for a repeated length over the limit, sent as one line or two', async () => {
      const small: WebhookOptions = { ...secretMode, maxBodySize: 16 }
      const over = UNDRAINABLE
      for (const headers of [{ 'content-length': `${over}, ${over}` }, ['Content-Length', over, 'content-length', over]]) {
        const body = vi.fn(async () => encode(BODY))
        const answer = await refusal(
          small,
          request({ headers: [...toList(headers), 'x-service-hmac-signature', await sign(BODY, SECRET)], body }),
        )
        expect([answer.status, answer.json.error]).toEqual([413, 'payload_too_large'])
        expect(body).not.toHaveBeenCalled()
      }
    })

    it('accepts a repeated length when every value is the same and within the limit', async () => {
      const headers = { ...(await signed()), 'content-length': `${encode(BODY).length}, ${encode(BODY).length}` }
      expect((await createReceiver(secretMode).verify(request({ headers }))).ok).toBe(true)
    })
  })

  describe('with a body over maxBodySize', () => {
    const small: WebhookOptions = { ...secretMode, maxBodySize: 16 }

    it('answers 413 payload_too_large from a declared Content-Length over what would be drained, without reading', async () => {
      const body = vi.fn(async () => encode(BODY))
      const answer = await refusal(small, request({ headers: { ...(await signed()), 'content-length': UNDRAINABLE }, body }))
      expect([answer.status, answer.json.error, answer.headers.connection]).toEqual([413, 'payload_too_large', 'close'])
      expect(body).not.toHaveBeenCalled()
    })

    it('reads a declared Content-Length over the limit through the body reader, which refuses it (and drains it)', async () => {
      const body = vi.fn(async () => encode(BODY))
      const answer = await refusal(small, request({ headers: { ...(await signed()), 'content-length': '100' }, body }))
      expect([answer.status, answer.json.error, answer.headers.connection]).toEqual([413, 'payload_too_large', undefined])
      expect(body).toHaveBeenCalledWith(16, 100)
    })

    it('hands the limit to the body reader and answers 413 when it says the body is too large', async () => {
      const body = vi.fn(async () => {
        throw Object.assign(new Error('request entity too large'), { status: 413 })
      })
      const answer = await refusal(small, request({ headers: await signed(), body }))
      expect(answer.status).toBe(413)
      expect(body).toHaveBeenCalledWith(16, undefined)
    })

    it('answers 413 when a reader hands back more than the limit, as a cache filled earlier may', async () => {
      const answer = await refusal(small, request({ headers: await signed(), body: async () => encode(BODY) }))
      expect(answer.json.error).toBe('payload_too_large')
    })

    it("reads a reader object of another copy of the core, and checks its bytes as it checks a function's", async () => {
      // An app that loads two builds of the core hands one the other's `nodeBody()`: not this copy's class.
      const foreign = (bytes: Uint8Array) => ({ read: vi.fn(async () => bytes) }) as unknown as IncomingRequest['body']
      const within = await createReceiver(secretMode).verify(request({ headers: await signed(), body: foreign(encode(BODY)) }))
      expect(within.ok).toBe(true)
      const answer = await refusal(small, request({ headers: await signed(), body: foreign(encode(BODY)) }))
      expect([answer.status, answer.json.error]).toEqual([413, 'payload_too_large'])
    })

    it('accepts a body of exactly maxBodySize, declared, streamed or in hand', async () => {
      const exact: WebhookOptions = { ...secretMode, maxBodySize: encode(BODY).byteLength }
      const declared = { ...(await signed()), 'content-length': String(encode(BODY).byteLength) }
      expect((await createReceiver(exact).verify(request({ headers: declared }))).ok).toBe(true)
      expect((await createReceiver(exact).verify(request({ headers: await signed(), body: async () => encode(BODY) }))).ok).toBe(true)
      const req = new Request('https://hooks.example.com/hooks', { method: 'POST', headers: await signed(), body: BODY })
      expect((await createReceiver(exact).verify(req)).ok).toBe(true)
    })

    it('answers 413 for bytes already in hand that exceed the limit', async () => {
      const answer = await refusal(small, request({ headers: await signed() }))
      expect(answer.json.error).toBe('payload_too_large')
    })
  })

  describe('with a Content-Encoding', () => {
    it('accepts identity, whatever its case and spacing, and empty elements as no encoding at all', async () => {
      for (const encoding of ['identity', 'Identity', ' IDENTITY ', 'identity, identity', '', ' ', 'identity, ', ',']) {
        const headers = { ...(await signed()), 'content-encoding': encoding }
        expect((await createReceiver(secretMode).verify(request({ headers }))).ok).toBe(true)
      }
    })

    it('answers 415 unsupported_encoding for a compressed body', async () => {
      for (const encoding of ['gzip', 'identity, gzip', 'br,identity', ', gzip', 'gzip,']) {
        const answer = await refusal(secretMode, request({ headers: { ...(await signed()), 'content-encoding': encoding } }))
        expect([answer.status, answer.json.error], encoding).toEqual([415, 'unsupported_encoding'])
      }
    })
  })

  describe('with a Transfer-Encoding', () => {
    it('accepts chunked and identity, whatever their case and spacing, as framing only', async () => {
      for (const codings of ['chunked', 'Chunked', 'identity, chunked', ' IDENTITY ,chunked ']) {
        const headers = { ...(await signed()), 'transfer-encoding': codings }
        expect((await createReceiver(secretMode).verify(request({ headers }))).ok, codings).toBe(true)
      }
    })

    it('answers 415 unsupported_encoding for any other coding, which the server hands on undone', async () => {
      for (const codings of ['gzip, chunked', 'deflate,chunked', 'x-pack, chunked', 'chunked, gzip', ', chunked']) {
        const answer = await refusal(secretMode, request({ headers: { ...(await signed()), 'transfer-encoding': codings } }))
        expect([answer.status, answer.json.error], codings).toEqual([415, 'unsupported_encoding'])
      }
    })
  })

  describe('with a Fetch Request', () => {
    it('verifies it as it is, reading its body stream', async () => {
      const req = new Request('https://hooks.example.com/hooks?tenant=acme', { method: 'POST', headers: await signed(), body: BODY })
      const result = await createReceiver(secretMode).verify(req)
      expect(result.ok && result.delivery.payload).toEqual(JSON.parse(BODY))
    })

    it('refuses a streamed body over the limit with 413', async () => {
      const req = new Request('https://hooks.example.com/hooks', { method: 'POST', headers: await signed(), body: BODY })
      const result = await createReceiver({ ...secretMode, maxBodySize: 8 }).verify(req)
      expect(!result.ok && result.error?.code).toBe('payload_too_large')
    })
  })

  describe('with a body of any source a runtime hands over', () => {
    it('verifies a body given as a string, an ArrayBuffer or bytes alike', async () => {
      const headers = await signed()
      const bodies: IncomingRequest['body'][] = [BODY, encode(BODY).buffer as ArrayBuffer, encode(BODY)]
      for (const body of bodies) {
        const result = await createReceiver(secretMode).verify({ method: 'POST', url: '/hooks', headers, body })
        expect(result.ok && result.delivery.payload).toEqual(JSON.parse(BODY))
      }
    })

    it('reads no body (null or undefined) as an empty one, refused as JSON rather than as unreadable', async () => {
      for (const body of [null, undefined]) {
        const answer = await refusal({ auth: { mode: 'none' } }, { method: 'POST', url: '/hooks', headers: {}, body })
        expect([answer.status, answer.json.error]).toEqual([400, 'invalid_json'])
      }
    })
  })

  describe('with the origin the request came to', () => {
    it('hands resolvers the full URL, so a secret can be chosen by host', async () => {
      const options: WebhookOptions = {
        auth: { mode: 'secret', secret: (req) => (req.url.hostname === 'tenant-a.example.com' ? SECRET : 'another-tenant') },
      }
      const incoming = request({ headers: await signed(), origin: 'https://tenant-a.example.com' })
      expect((await createReceiver(options).verify(incoming)).ok).toBe(true)
    })

    it('falls back to the path alone when the origin is no URL', async () => {
      const seen: string[] = []
      const options: WebhookOptions = {
        auth: {
          mode: 'secret',
          secret: (req) => {
            seen.push(req.url.pathname)
            return SECRET
          },
        },
      }
      expect((await createReceiver(options).verify(request({ headers: await signed(), origin: 'not a url' }))).ok).toBe(true)
      expect(seen).toEqual(['/hooks'])
    })
  })

  describe('when the body cannot be read', () => {
    it('answers 400 invalid_body, keeping the failure as the cause, when the reader rejects with anything', async () => {
      for (const reason of [null, undefined, 'aborted']) {
        const result = await createReceiver(secretMode).verify(request({ headers: await signed(), body: () => Promise.reject(reason) }))
        expect(!result.ok && [result.response.status, result.error?.code, result.error?.cause]).toEqual([400, 'invalid_body', reason])
      }
    })

    it("passes on a reader's own refusal as it is", async () => {
      const body = () => Promise.reject(rawBodyUnavailable('Mount the route before the JSON parser.'))
      const answer = await refusal(secretMode, request({ headers: await signed(), body }))
      expect(answer.json.error).toBe('raw_body_unavailable')
    })

    it('answers 400 invalid_body when the reader fails, as when the client aborts', async () => {
      const answer = await refusal(secretMode, request({ headers: await signed(), body: () => Promise.reject(new Error('aborted')) }))
      expect([answer.status, answer.json.error]).toEqual([400, 'invalid_body'])
    })

    it('answers 415 unsupported_encoding for a compressed body', async () => {
      const answer = await refusal(secretMode, request({ headers: { ...(await signed()), 'content-encoding': 'gzip' } }))
      expect([answer.status, answer.json.error]).toEqual([415, 'unsupported_encoding'])
    })
  })

  describe("in mode 'basic'", () => {
    const basic: WebhookOptions = { auth: { mode: 'basic', username: 'hook-user', password: 'correct horse' } }
    const authorization = (username: string, password: string) => ({ authorization: formatBasicAuthorization(username, password) })

    it('hands on the delivery for the right credentials', async () => {
      const result = await createReceiver(basic).verify(request({ headers: authorization('hook-user', 'correct horse') }))
      expect(result.ok && result.delivery.mode).toBe('basic')
    })

    it('answers 401 missing_credentials with a Basic challenge when there is no Authorization header', async () => {
      const answer = await refusal(basic, request())
      expect([answer.status, answer.json.error]).toEqual([401, 'missing_credentials'])
      expect(answer.headers['www-authenticate']).toBe('Basic realm="webhook", charset="UTF-8"')
    })

    it('answers 401 missing_credentials for another scheme', async () => {
      expect((await refusal(basic, request({ headers: { authorization: 'Bearer x' } }))).json.error).toBe('missing_credentials')
    })

    for (const [label, headers] of [
      ['a wrong password', authorization('hook-user', 'wrong')],
      ['a wrong username', authorization('someone', 'correct horse')],
      ['bad base64', { authorization: 'Basic %%%' }],
      ['no colon', { authorization: `Basic ${btoa('hook-user')}` }],
    ] as const) {
      it(`answers 401 invalid_credentials with the challenge for ${label}`, async () => {
        const answer = await refusal(
          { auth: { mode: 'basic', username: 'hook-user', password: 'correct horse', realm: 'hooks' } },
          request({ headers }),
        )
        expect([answer.status, answer.json.error]).toEqual([401, 'invalid_credentials'])
        expect(answer.headers['www-authenticate']).toBe('Basic realm="hooks", charset="UTF-8"')
      })
    }

    it('asks a custom verify function, with the request', async () => {
      const verify = vi.fn((username: string, password: string, _req: WebhookRequest) => username === 'tenant-7' && password === 'pw')
      const receiver = createReceiver({ auth: { mode: 'basic', verify } })
      expect((await receiver.verify(request({ url: '/h?x=1', headers: authorization('tenant-7', 'pw') }))).ok).toBe(true)
      expect((await receiver.verify(request({ headers: authorization('tenant-7', 'no') }))).ok).toBe(false)
      expect(verify.mock.calls[0]?.[2]?.url.searchParams.get('x')).toBe('1')
    })

    describe('with a password typed in another Unicode normal form (RFC 7617 §2.1)', () => {
      const decomposed = 'pa\u0308sswo\u0308rd' // "pässwörd" as a plus U+0308 COMBINING DIAERESIS
      const composed = 'p\u00e4ssw\u00f6rd'

      it('accepts the composed form a client sends for a password configured decomposed', async () => {
        const receiver = createReceiver({ auth: { mode: 'basic', username: 'émile', password: decomposed } })
        expect((await receiver.verify(request({ headers: authorization('émile', composed) }))).ok).toBe(true)
      })

      it('accepts a decomposed password sent for one configured composed', async () => {
        const receiver = createReceiver({ auth: { mode: 'basic', username: 'e\u0301mile', password: composed } })
        expect((await receiver.verify(request({ headers: authorization('émile', decomposed) }))).ok).toBe(true)
      })

      it('hands a custom verify function the normalised credentials', async () => {
        const verify = vi.fn((_username: string, password: string) => password === composed)
        const receiver = createReceiver({ auth: { mode: 'basic', verify } })
        expect((await receiver.verify(request({ headers: authorization('émile', decomposed) }))).ok).toBe(true)
      })

      it('still refuses a different password', async () => {
        const receiver = createReceiver({ auth: { mode: 'basic', username: 'émile', password: composed } })
        expect((await receiver.verify(request({ headers: authorization('émile', 'passwort') }))).ok).toBe(false)
      })
    })

    it('refuses a request that fails authentication whatever its body holds', async () => {
      const body = vi.fn(async () => encode('not json at all'))
      const answer = await refusal(basic, request({ headers: authorization('hook-user', 'wrong'), body }))
      expect([answer.status, answer.json.error]).toEqual([401, 'invalid_credentials'])
    })
  })

  describe("in mode 'oauth2'", () => {
    const NOW = Date.UTC(2026, 5, 1)
    const oauth = (extra: Partial<Extract<WebhookOptions['auth'], { mode: 'oauth2' }>> = {}, clock = () => NOW): WebhookOptions => ({
      auth: { mode: 'oauth2', appId: 'app-1', secret: 'app-secret', ...extra },
      clock,
    })
    const tokenUrl = (params: Record<string, string>) => `/token?${new URLSearchParams(params)}`
    const goodParams = { appid: 'app-1', secret: 'app-secret', grant_type: 'client_credentials' }

    async function issue(options = oauth()): Promise<string> {
      const answer = await createReceiver(options, { role: 'token' }).token(request({ method: 'GET', url: tokenUrl(goodParams), body: '' }))
      return JSON.parse(answer.body).access_token
    }

    describe('the token acquisition address', () => {
      it("answers 200 with a Bearer token for the service's GET", async () => {
        const answer = await createReceiver(oauth(), { role: 'token' }).token(
          request({ method: 'GET', url: tokenUrl(goodParams), body: '' }),
        )
        expect(answer.status).toBe(200)
        expect(answer.headers['cache-control']).toBe('no-store')
        expect(JSON.parse(answer.body)).toEqual({ access_token: expect.any(String), expires_in: 7200, token_type: 'Bearer' })
      })

      it('follows tokenTtl in expires_in', async () => {
        const answer = await createReceiver(oauth({ tokenTtl: 600 }), { role: 'token' }).token(
          request({ method: 'GET', url: tokenUrl(goodParams), body: '' }),
        )
        expect(JSON.parse(answer.body).expires_in).toBe(600)
      })

      it('accepts the same fields as a form-urlencoded POST', async () => {
        const answer = await createReceiver(oauth(), { role: 'token' }).token(
          request({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(goodParams).toString() }),
        )
        expect(answer.status).toBe(200)
      })

      for (const [label, params, status, error] of [
        ['grant_type is missing', { appid: 'app-1', secret: 'app-secret' }, 400, 'invalid_request'],
        ['appid is missing', { secret: 'app-secret', grant_type: 'client_credentials' }, 400, 'invalid_request'],
        ['secret is missing', { appid: 'app-1', grant_type: 'client_credentials' }, 400, 'invalid_request'],
        ['grant_type is not client_credentials', { ...goodParams, grant_type: 'password' }, 400, 'unsupported_grant_type'],
        ['the secret is wrong', { ...goodParams, secret: 'guess' }, 401, 'invalid_client'],
        ['the app id is wrong', { ...goodParams, appid: 'app-2' }, 401, 'invalid_client'],
      ] as const) {
        it(`answers ${status} ${error} when ${label}`, async () => {
          const answer = await createReceiver(oauth(), { role: 'token' }).token(request({ method: 'GET', url: tokenUrl(params), body: '' }))
          expect([answer.status, JSON.parse(answer.body).error]).toEqual([status, error])
          expect(answer.body).not.toContain('app-secret')
        })
      }

      it('answers 405 with Allow for other methods', async () => {
        const answer = await createReceiver(oauth(), { role: 'token' }).token(request({ method: 'PUT', url: tokenUrl(goodParams) }))
        expect([answer.status, answer.headers.allow]).toEqual([405, 'GET, POST'])
      })

      it('cannot be created for another mode', () => {
        expect(() => createReceiver(secretMode, { role: 'token' })).toThrow(/^@hookguard\/core: /)
      })
    })

    describe('the message receiving address', () => {
      it('accepts the token in the access_token query parameter', async () => {
        const token = await issue()
        const result = await createReceiver(oauth()).verify(request({ url: `/hooks?access_token=${token}` }))
        expect(result.ok && result.delivery.payload).toEqual(JSON.parse(BODY))
      })

      it('accepts the token in an Authorization: Bearer header, scheme in any case', async () => {
        const token = await issue()
        expect((await createReceiver(oauth()).verify(request({ headers: { authorization: `bearer ${token}` } }))).ok).toBe(true)
      })

      it('accepts the token as a form field, and hands on the other fields as the payload', async () => {
        const token = await issue()
        const result = await createReceiver(oauth()).verify(
          request({
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: `event=ping&access_token=${token}&tag=a&tag=b`,
          }),
        )
        expect(result.ok && result.delivery.payload).toEqual({ event: 'ping', tag: ['a', 'b'] })
      })

      it('reads a token from the body only when the body says it is a form, parameters and case aside', async () => {
        const token = await issue()
        const body = `event=ping&access_token=${token}`
        for (const type of ['Application/X-WWW-Form-URLEncoded', 'application/x-www-form-urlencoded ; charset=utf-8']) {
          expect((await createReceiver(oauth()).verify(request({ headers: { 'content-type': type }, body }))).ok, type).toBe(true)
        }
        for (const type of [
          'text/plain; x=application/x-www-form-urlencoded',
          'application/x-www-form-urlencodedx',
          'application/x-www-form-urlencoded-v2',
        ]) {
          const answer = await refusal(oauth(), request({ headers: { 'content-type': type }, body }))
          expect([answer.status, answer.json.error], type).toEqual([401, 'missing_token'])
        }
      })

      it('hands on form fields as writable, deletable own properties, as JSON.parse gives them', async () => {
        const token = await issue()
        const result = await createReceiver(oauth()).verify(
          request({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `event=ping&access_token=${token}` }),
        )
        if (!result.ok) throw new Error('expected a delivery')
        const payload = result.delivery.payload as Record<string, unknown>
        payload.event = 'changed'
        expect(payload.event).toBe('changed')
        expect(delete payload.event).toBe(true)
        expect(Object.keys(payload)).toEqual([])
      })

      it('hands on a form field named __proto__ as an ordinary field, never as the prototype', async () => {
        const token = await issue()
        for (const body of [`__proto__=x&__proto__=y&access_token=${token}`, `__proto__=x&access_token=${token}&constructor=c`]) {
          const result = await createReceiver(oauth()).verify(
            request({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body }),
          )
          if (!result.ok) throw new Error('expected a delivery')
          const payload = result.delivery.payload as Record<string, unknown>
          expect(Object.getPrototypeOf(payload)).toBe(Object.prototype)
          expect(Object.hasOwn(payload, '__proto__')).toBe(true)
          expect(Object.hasOwn(payload, '__proto__')).toBe(true)
          expect(String(payload)).toBe('[object Object]')
          expect(Object.keys(payload)).toContain('__proto__')
        }
      })

      it('checks a form token before the form is decoded: a bad token in a form that is not UTF-8 is 401, not 400', async () => {
        const body = new Uint8Array([...encode('event=ping&name='), 0xff, 0xfe, ...encode('&access_token=forged.token')])
        const answer = await refusal(oauth(), request({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body }))
        expect([answer.status, answer.json.error]).toEqual([401, 'invalid_token'])
        const missing = await refusal(
          oauth(),
          request({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.slice(0, 18) }),
        )
        expect([missing.status, missing.json.error]).toEqual([401, 'missing_token'])
      })

      it('refuses a form token longer than any token as invalid_token, a real token within the bound still found', async () => {
        const headers = { 'content-type': 'application/x-www-form-urlencoded' }
        const long = await refusal(oauth(), request({ headers, body: `event=ping&access_token=${'%41'.repeat(64 * 1024)}` }))
        expect([long.status, long.json.error]).toEqual([401, 'invalid_token'])
        const escaped = [...(await issue())].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('')
        const genuine = await createReceiver(oauth()).verify(request({ headers, body: `event=ping&access_token=${escaped}` }))
        expect(genuine.ok).toBe(true)
      })

      it('refuses a form token delivery of more than MAX_FORM_FIELDS fields with 400 invalid_body, read in full', async () => {
        const token = await issue()
        const fields = (count: number) => [...Array.from({ length: count - 1 }, (_, i) => `f${i}=${i}`), `access_token=${token}`].join('&')
        const headers = { 'content-type': 'application/x-www-form-urlencoded' }
        const events: WebhookEvent[] = []
        const receiver = createReceiver({ ...oauth(), onEvent: (event) => events.push(event) })
        const over = await receiver.verify(request({ headers, body: fields(MAX_FORM_FIELDS + 1) }))
        if (over.ok) throw new Error('expected a refusal')
        expect([over.response.status, JSON.parse(over.response.body)]).toEqual([
          400,
          { error: 'invalid_body', message: `The form has more than ${MAX_FORM_FIELDS} fields.` },
        ])
        // Refused after the whole body was read: the connection carries the next delivery.
        expect(over.response.headers.connection).toBeUndefined()
        expect(events.at(-1)).toMatchObject({ type: 'rejected', code: 'invalid_body', status: 400, bodyBytes: expect.any(Number) })
        // An empty part (a trailing `&`) counts, as body-parser counts it.
        const trailing = await receiver.verify(request({ headers, body: `${fields(MAX_FORM_FIELDS)}&` }))
        expect(!trailing.ok && trailing.error?.code).toBe('invalid_body')
        const within = await receiver.verify(request({ headers, body: fields(MAX_FORM_FIELDS) }))
        expect(within.ok && Object.keys(within.delivery.payload as object).length).toBe(MAX_FORM_FIELDS - 1)
      })

      it('counts the fields before it looks for the token: a form over MAX_FORM_FIELDS is 400 invalid_body with no token or a wrong one', async () => {
        // The token search reads the form part by part; counting first (a native search) keeps a
        // form of a million short fields that are not the token from costing a step each.
        const headers = { 'content-type': 'application/x-www-form-urlencoded' }
        const many = Array.from({ length: MAX_FORM_FIELDS + 1 }, () => 'access_toke=1').join('&')
        for (const body of [many, `${many}&access_token=not.valid`]) {
          const answer = await refusal(oauth(), request({ headers, body }))
          expect([answer.status, answer.json.error]).toEqual([400, 'invalid_body'])
        }
        // Within the cap, a missing token is still what is said.
        const few = await refusal(oauth(), request({ headers, body: 'access_toke=1&a=2' }))
        expect([few.status, few.json.error]).toEqual([401, 'missing_token'])
      })

      it('finds the form token as URLSearchParams reads the form: escaped name, escaped value; never one of several', async () => {
        const token = await issue()
        const escaped = token.replace('.', '%2E')
        for (const body of [
          `access%5Ftoken=${escaped}`,
          `%61ccess_token=${token}&event=ping`,
          `&&access_token=${token}&event=ping`,
          `event=access_token&access_token=${token}`,
          `access_token2=x&xaccess_token=y&access_token=${token}`,
        ]) {
          const result = await createReceiver(oauth()).verify(
            request({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body }),
          )
          expect(result.ok, body).toBe(true)
        }
        for (const [body, error] of [
          [`access_token=forged.token&access_token=${token}`, 'invalid_request'],
          [`&&access_token=${token}&access_token=forged.token`, 'invalid_request'],
          [`access_token=${token}&%61ccess%5Ftoken=${token}`, 'invalid_request'],
          [`access+token=${token}`, 'missing_token'],
          [`access_token&access_token=${token}`, 'invalid_request'],
          [`access_token=&access_token=${token}`, 'invalid_request'],
          [`access_token=${token}+`, 'invalid_token'],
        ] as const) {
          const answer = await refusal(oauth(), request({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body }))
          expect(answer.json.error, body).toBe(error)
        }
      })

      it('leaves the access_token field out of the payload, and gathers repeated fields in the order first seen', async () => {
        const token = await issue()
        const result = await createReceiver(oauth()).verify(
          request({
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: `b=1&access_token=${token}&a=2&b=3&b=4&constructor=c`,
          }),
        )
        if (!result.ok) throw new Error('expected a delivery')
        const payload = result.delivery.payload as Record<string, unknown>
        expect(payload).toEqual({ b: ['1', '3', '4'], a: '2', constructor: 'c' })
        expect(Object.keys(payload)).toEqual(['b', 'a', 'constructor'])
      })

      it('accepts a Bearer header with several spaces before the token and whitespace after it', async () => {
        const token = await issue()
        for (const authorization of [`Bearer   ${token}`, `Bearer ${token} `, `BEARER ${token}\t`]) {
          expect((await createReceiver(oauth()).verify(request({ headers: { authorization } }))).ok).toBe(true)
        }
      })

      it('answers 401 missing_token for an Authorization header of another scheme, or with more after the token', async () => {
        const token = await issue()
        for (const authorization of [`xBearer ${token}`, `Bearers ${token}`, `Bearer${token}`, `Bearer ${token} extra`, `Basic ${token}`]) {
          const answer = await refusal(oauth(), request({ headers: { authorization } }))
          expect([answer.status, answer.json.error]).toEqual([401, 'missing_token'])
        }
      })

      it('answers 401 missing_token, not invalid_token, for an empty access_token parameter', async () => {
        const answer = await refusal(oauth(), request({ url: '/hooks?access_token=' }))
        expect([answer.status, answer.json.error]).toEqual([401, 'missing_token'])
      })

      it('takes the token from a Bearer header even when the body is a form without one', async () => {
        const token = await issue()
        const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' }
        const result = await createReceiver(oauth()).verify(request({ headers, body: 'event=ping' }))
        // Authenticated by the header; the body is then read as the JSON a delivery is.
        expect(!result.ok && result.error?.code).toBe('invalid_json')
      })

      it('answers 401 invalid_token with the expiry named once the token has expired, and another message otherwise', async () => {
        const token = await issue()
        const expired = await refusal(
          oauth({}, () => NOW + 7200_000),
          request({ url: `/hooks?access_token=${token}` }),
        )
        const forged = await refusal(oauth(), request({ url: `/hooks?access_token=${token}x` }))
        expect(expired.json.message).toMatch(/expired/)
        expect(forged.json.message).not.toMatch(/expired/)
      })

      it('answers 401 missing_token with a Bearer challenge when there is none', async () => {
        const answer = await refusal(oauth(), request())
        expect([answer.status, answer.json.error, answer.headers['www-authenticate']]).toEqual([401, 'missing_token', 'Bearer'])
      })

      it('answers 401 invalid_token once the token has expired', async () => {
        const token = await issue()
        const later = oauth({}, () => NOW + 7200_000)
        const answer = await refusal(later, request({ url: `/hooks?access_token=${token}` }))
        expect([answer.status, answer.json.error]).toEqual([401, 'invalid_token'])
        expect(answer.headers['www-authenticate']).toBe('Bearer error="invalid_token"')
      })

      it('answers 401 invalid_token for a token of another app or another secret', async () => {
        const foreign = await issue(oauth({ appId: 'app-2' } as never))
        const otherSecret = await issue({ auth: { mode: 'oauth2', appId: 'app-1', secret: 'other' }, clock: () => NOW })
        for (const token of [foreign, otherSecret, `${await issue()}x`]) {
          expect((await refusal(oauth(), request({ url: `/hooks?access_token=${token}` }))).json.error).toBe('invalid_token')
        }
      })

      it('accepts a token from another receiver configured alike: nothing is stored', async () => {
        const token = await issue()
        expect((await createReceiver(oauth()).verify(request({ headers: { authorization: `Bearer ${token}` } }))).ok).toBe(true)
      })

      it('keeps accepting tokens from a rotated-out key while it is still listed in tokenKeys', async () => {
        const token = await issue(oauth({ tokenKeys: ['key-1'] }))
        const rotated = await createReceiver(oauth({ tokenKeys: ['key-2', 'key-1'] })).verify(request({ url: `/h?access_token=${token}` }))
        const dropped = await createReceiver(oauth({ tokenKeys: ['key-2'] })).verify(request({ url: `/h?access_token=${token}` }))
        expect([rotated.ok, dropped.ok]).toEqual([true, false])
      })
    })
  })

  describe('the token method of a receiver for deliveries', () => {
    it('answers 405 method_not_allowed: that address issues no tokens', async () => {
      const answer = await createReceiver(secretMode).token(request({ method: 'GET', url: '/token', body: '' }))
      expect([answer.status, JSON.parse(answer.body).error]).toEqual([405, 'method_not_allowed'])
    })
  })

  describe("in mode 'none'", () => {
    const none: WebhookOptions = { auth: { mode: 'none' } }

    it('hands on any JSON delivery', async () => {
      const result = await createReceiver(none).verify(request())
      expect(result.ok && result.delivery).toMatchObject({ mode: 'none', payload: JSON.parse(BODY) })
    })

    it('still enforces the size limit and JSON parsing', async () => {
      expect((await refusal({ ...none, maxBodySize: 4 }, request())).json.error).toBe('payload_too_large')
      expect((await refusal(none, request({ body: '{' }))).json.error).toBe('invalid_json')
    })
  })

  describe('every failure answer', () => {
    it('is JSON { error, message } with Cache-Control: no-store, and names no secret, credential or body', async () => {
      const answers = [
        await refusal(secretMode, request({ headers: await signed(BODY, 'wrong') })),
        await refusal(
          { auth: { mode: 'basic', username: 'u', password: 'hunter2-password' } },
          request({ headers: { authorization: formatBasicAuthorization('u', 'hunter2-passwor') } }),
        ),
        await refusal({ auth: { mode: 'oauth2', appId: 'a', secret: 'oauth-secret' } }, request({ url: '/h?access_token=forged.token' })),
        await refusal(secretMode, request({ headers: await signed('{"nested": ["王 小明"') })),
      ]
      for (const answer of answers) {
        expect(answer.headers['cache-control']).toBe('no-store')
        expect(answer.headers['content-type']).toMatch(/^application\/json/)
        expect(Object.keys(answer.json).sort()).toEqual(['error', 'message'])
        for (const secret of [SECRET, 'hunter2', 'oauth-secret', 'forged.token', '王 小明', 'customer.created']) {
          expect(answer.body).not.toContain(secret)
        }
      }
    })
  })

  describe('when misconfigured', () => {
    const bad: [string, unknown][] = [
      ['no options', undefined],
      ['no auth', {}],
      ['an unknown mode', { auth: { mode: 'hmac' } }],
      ['an empty secret', { auth: { mode: 'secret', secret: '' } }],
      ['an empty secret list', { auth: { mode: 'secret', secret: [] } }],
      ['a Basic username with a colon', { auth: { mode: 'basic', username: 'a:b', password: 'p' } }],
      ['an empty Basic password', { auth: { mode: 'basic', username: 'hook-user', password: '' } }],
      ['no Basic password', { auth: { mode: 'basic', username: 'hook-user' } }],
      ['a control character in the Basic password', { auth: { mode: 'basic', username: 'hook-user', password: 'pass\nword' } }],
      ['a control character in the Basic username', { auth: { mode: 'basic', username: 'hook\u0000user', password: 'p' } }],
      ['DEL in the Basic password', { auth: { mode: 'basic', username: 'hook-user', password: 'pass\u007f' } }],
      ['a unicodeWhitespace that is not a boolean', { auth: { mode: 'secret', secret: 's', unicodeWhitespace: 'yes' } }],
      ['Basic credentials and a verify function', { auth: { mode: 'basic', username: 'a', password: 'p', verify: () => true } }],
      ['no OAuth app id', { auth: { mode: 'oauth2', appId: '', secret: 's' } }],
      ['a fractional tokenTtl', { auth: { mode: 'oauth2', appId: 'a', secret: 's', tokenTtl: 1.5 } }],
      ['empty tokenKeys', { auth: { mode: 'oauth2', appId: 'a', secret: 's', tokenKeys: [] } }],
      ['an empty entry among the tokenKeys', { auth: { mode: 'oauth2', appId: 'a', secret: 's', tokenKeys: ['key-1', ''] } }],
      ['a tokenKeys entry that is not a string', { auth: { mode: 'oauth2', appId: 'a', secret: 's', tokenKeys: ['key-1', 7] } }],
      ['an empty entry in a secret list', { auth: { mode: 'secret', secret: ['s', ''] } }],
      ['a negative maxBodySize', { auth: { mode: 'none' }, maxBodySize: -1 }],
      ['a zero maxDepth', { auth: { mode: 'none' }, maxDepth: 0 }],
    ]
    for (const [label, options] of bad) {
      it(`throws a TypeError naming the package for ${label}`, () => {
        expect(() => createReceiver(options as WebhookOptions)).toThrow(/^@hookguard\/core: /)
        expect(() => createReceiver(options as WebhookOptions)).toThrow(TypeError)
      })
    }

    it('does not write onto the options object it was given', () => {
      const options = Object.freeze({ auth: Object.freeze({ mode: 'none' as const }) })
      expect(() => createReceiver(options)).not.toThrow()
    })
  })
})
