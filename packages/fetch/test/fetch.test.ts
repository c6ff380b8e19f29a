import { webhook } from '@hookguard/fetch'
import { auth, delivered, signed } from '@hookguard/testkit/adapter-tests'
import { describe, expect, it } from 'vitest'

// What differs for a fetch handler: the platform's own arguments, the request handed on, a body
// read before webhook(), and refusals thrown to the platform. The HTTP behaviour is the
// conformance table's (test/conformance, factories "Fetch handler").

/** The service's signed delivery as a Fetch `Request`. */
function signedRequest(): Request {
  return new Request(`http://localhost${signed.path}`, { method: 'POST', headers: signed.headers, body: delivered.raw })
}

describe('webhook(options, handler)', () => {
  describe("the platform's own arguments", () => {
    it('hands every argument after the request on to the handler, in order', async () => {
      const env = { WEBHOOK_SECRET: 'bound' }
      const ctx = { waitUntil: (_: Promise<unknown>) => {} }
      const handle = webhook({ auth }, (_delivery, _request, givenEnv: typeof env, givenCtx: typeof ctx) =>
        Response.json({ sameEnv: givenEnv === env, sameCtx: givenCtx === ctx }),
      )
      const answer = await handle(signedRequest(), env, ctx)
      expect(await answer.json()).toEqual({ sameEnv: true, sameCtx: true })
    })

    it("answers with the handler's own Response, returned or resolved", async () => {
      const sync = webhook({ auth }, () => new Response('sync', { status: 202, headers: { 'x-from': 'handler' } }))
      const later = webhook({ auth }, async () => new Response('async', { status: 201 }))
      const first = await sync(signedRequest())
      expect([first.status, first.headers.get('x-from'), await first.text()]).toEqual([202, 'handler', 'sync'])
      const second = await later(signedRequest())
      expect([second.status, await second.text()]).toEqual([201, 'async'])
    })
  })

  describe('the request handed to the handler', () => {
    it('is the request the platform passed, not a clone, its body read by webhook()', async () => {
      const request = signedRequest()
      let seen: Request | undefined
      const handle = webhook({ auth }, (delivery, given) => {
        seen = given
        return Response.json({ payload: delivery.payload, raw: new TextDecoder().decode(delivery.rawBody) })
      })
      const answer = await handle(request)
      expect(await answer.json()).toEqual({ payload: delivered.payload, raw: delivered.raw })
      expect(seen).toBe(request)
      expect(request.bodyUsed).toBe(true)
    })

    it('reads a streamed body with no Content-Length within maxBodySize', async () => {
      const bytes = new TextEncoder().encode(signed.body as string)
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.subarray(0, 10))
          controller.enqueue(bytes.subarray(10))
          controller.close()
        },
      })
      const request = new Request('http://localhost/hooks', {
        method: 'POST',
        headers: signed.headers,
        body,
        duplex: 'half',
      } as RequestInit)
      const answer = await webhook({ auth }, (delivery) => Response.json(delivery.payload))(request)
      expect(await answer.json()).toEqual(delivered.payload)
      expect(request.bodyUsed).toBe(true)
    })
  })

  describe('a body read before webhook()', () => {
    it.each([
      ['request.text()', (request: Request) => request.text()],
      ['request.json()', (request: Request) => request.json()],
      ['request.arrayBuffer()', (request: Request) => request.arrayBuffer()],
    ])('answers 500 raw_body_unavailable after %s, and the handler never runs', async (_, read) => {
      let handled = 0
      const handle = webhook({ auth }, () => {
        handled++
        return new Response(null, { status: 204 })
      })
      const request = signedRequest()
      await read(request)
      const answer = await handle(request)
      expect(answer.status).toBe(500)
      const body = (await answer.json()) as { error: string; message: string }
      expect(body.error).toBe('raw_body_unavailable')
      expect(body.message).toMatch(/before anything reads its body/)
      expect(handled).toBe(0)
    })

    it('answers 500 raw_body_unavailable when someone holds a reader of the body', async () => {
      const request = new Request('http://localhost/hooks', {
        method: 'POST',
        headers: { 'x-service-hmac-signature': 'ab' },
        body: new ReadableStream<Uint8Array>(),
        duplex: 'half',
      } as RequestInit)
      request.body?.getReader()
      const answer = await webhook({ auth }, () => new Response(null, { status: 204 }))(request)
      expect(answer.status).toBe(500)
      expect(((await answer.json()) as { error: string }).error).toBe('raw_body_unavailable')
    })
  })

  describe('with dedupe', () => {
    it("remembers a delivery once the handler's answer succeeded, and answers its duplicate without the handler", async () => {
      let handled = 0
      const handle = webhook({ auth, dedupe: {} }, () => {
        handled++
        return new Response(null, { status: 204 })
      })
      expect((await handle(signedRequest())).status).toBe(204)
      const duplicate = await handle(signedRequest())
      expect(duplicate.status).toBe(200)
      expect(await duplicate.json()).toMatchObject({ duplicate: true })
      expect(handled).toBe(1)
    })

    it.each([
      ['answers 500', () => new Response(null, { status: 500 })],
      [
        'throws',
        () => {
          throw new Error('the database is down')
        },
      ],
    ])('releases a delivery whose handler %s, so that the retry runs it again', async (_, fail) => {
      let calls = 0
      const handle = webhook({ auth, dedupe: {} }, () => (++calls === 1 ? fail() : new Response(null, { status: 204 })))
      await handle(signedRequest()).catch(() => undefined)
      expect((await handle(signedRequest())).status).toBe(204)
      expect(calls).toBe(2)
    })
  })

  describe("with onError: 'throw'", () => {
    it('rejects with the WebhookError, carrying the status and headers the answer would have', async () => {
      const handle = webhook({ auth: { mode: 'basic', username: 'hook-user', password: 'correct horse' }, onError: 'throw' }, () => {
        throw new Error('the handler ran')
      })
      const refusal = handle(new Request('http://localhost/hooks', { method: 'POST', body: '{}' }))
      await expect(refusal).rejects.toMatchObject({ name: 'WebhookError', code: 'missing_credentials', status: 401 })
      await expect(refusal).rejects.toHaveProperty(['headers', 'www-authenticate'], 'Basic realm="webhook", charset="UTF-8"')
    })

    it('refuses any other onError at setup, naming @hookguard/fetch', () => {
      // @ts-expect-error 'next' is Express's
      expect(() => webhook({ auth, onError: 'next' }, () => new Response())).toThrow(/^@hookguard\/fetch: onError must be/)
    })
  })
})
