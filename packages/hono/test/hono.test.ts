import { getRequestListener } from '@hono/node-server'
import { tokenEndpoint, WebhookError, type WebhookRequest, webhook } from '@hookguard/hono'
import { auth, delivered, serverPerTest, signed, vector } from '@hookguard/testkit/adapter-tests'
import { type Outgoing, sendToFetch } from '@hookguard/testkit/http'
import { Hono, type MiddlewareHandler } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { describe, expect, it } from 'vitest'

// What differs per framework: bodies read before webhook(), reading the body again after it,
// mount paths, onError.

const { payload } = delivered
const listen = serverPerTest()

/** Runs `app` in process and on @hono/node-server, whose request body is a Node stream underneath. */
const runners = [
  ['app.request', async (app: Hono) => (outgoing: Outgoing) => sendToFetch(app.request, outgoing)],
  ['@hono/node-server', async (app: Hono) => (await listen(getRequestListener(app.fetch))).send],
] as const

/** Reads the body in a middleware before webhook(), the way a logger or validator would. */
const readFirst =
  (read: (c: Parameters<MiddlewareHandler>[0]) => Promise<unknown>): MiddlewareHandler =>
  async (c, next) => {
    await read(c)
    await next()
  }

describe.each(runners)('Hono (%s)', (_, run) => {
  describe('reading the body again', () => {
    it('lets the handler call c.req.json(), c.req.text() and c.req.arrayBuffer() after webhook()', async () => {
      const app = new Hono()
      app.post('/hooks', webhook({ auth }), async (c) => {
        const bytes = new Uint8Array(await c.req.arrayBuffer())
        return c.json({ json: await c.req.json(), text: await c.req.text(), bytes: bytes.byteLength })
      })
      const reply = await (await run(app))(signed)
      expect(reply.status).toBe(200)
      expect(JSON.parse(reply.text)).toEqual({ json: payload, text: vector.body, bytes: Buffer.byteLength(vector.body) })
    })
  })

  describe('after a middleware that read the body', () => {
    it.each([
      ['c.req.json()', (c: Parameters<MiddlewareHandler>[0]) => c.req.json()],
      ['c.req.text()', (c: Parameters<MiddlewareHandler>[0]) => c.req.text()],
      ['c.req.arrayBuffer()', (c: Parameters<MiddlewareHandler>[0]) => c.req.arrayBuffer()],
      ['c.req.blob()', (c: Parameters<MiddlewareHandler>[0]) => c.req.blob()],
    ])('verifies the bytes Hono cached for %s', async (_, read) => {
      const app = new Hono()
      app.post('/hooks', readFirst(read), webhook({ auth }), (c) => c.json(c.get('webhook').payload))
      const reply = await (await run(app))(signed)
      expect(reply.status).toBe(200)
      expect(JSON.parse(reply.text)).toEqual(payload)
    })

    it("verifies again after another webhook() read it (one for every route, one of the route's own)", async () => {
      const app = new Hono()
      app.use('/hooks/*', webhook({ auth }))
      app.post('/hooks/orders', webhook({ auth, maxBodySize: 64 * 1024 }), (c) => c.json(c.get('webhook').payload))
      const reply = await (await run(app))({ ...signed, path: '/hooks/orders' })
      expect(reply.status).toBe(200)
      expect(JSON.parse(reply.text)).toEqual(payload)
    })

    it('answers 413 payload_too_large when the cached body is over maxBodySize', async () => {
      const app = new Hono()
      app.post(
        '/hooks',
        readFirst((c) => c.req.text()),
        webhook({ auth, maxBodySize: 64 }),
        (c) => c.json(null),
      )
      const reply = await (await run(app))({ ...signed, headers: { 'x-service-hmac-signature': vector.signature } })
      expect(reply.status).toBe(413)
      expect(JSON.parse(reply.text).error).toBe('payload_too_large')
    })

    it('answers 500 raw_body_unavailable after c.req.raw was read directly, and says how to mount it', async () => {
      const app = new Hono()
      app.post(
        '/hooks',
        readFirst((c) => c.req.raw.text()),
        webhook({ auth }),
        (c) => c.json(null),
      )
      const reply = await (await run(app))(signed)
      expect(reply.status).toBe(500)
      const answer = JSON.parse(reply.text)
      expect(answer.error).toBe('raw_body_unavailable')
      expect(answer.message).toContain('c.req.text()')
    })

    it('verifies a form delivery that c.req.parseBody() read first (mode oauth2, the token as a form field)', async () => {
      const options = { auth: { mode: 'oauth2', appId: 'wx-app-1042', secret: 'oauth-secret-4f1d9a' } } as const
      const app = new Hono()
      app.get('/token', tokenEndpoint(options))
      app.post(
        '/hooks',
        readFirst((c) => c.req.parseBody()),
        webhook(options),
        (c) => c.json(c.get('webhook').payload),
      )
      const send = await run(app)
      const token = JSON.parse(
        (await send({ method: 'GET', path: '/token?appid=wx-app-1042&secret=oauth-secret-4f1d9a&grant_type=client_credentials' })).text,
      )
      const form = { path: '/hooks', headers: { 'content-type': 'application/x-www-form-urlencoded' } }
      const reply = await send({ ...form, body: `event=order.paid&access_token=${token.access_token}` })
      expect(reply.status).toBe(200)
      expect(JSON.parse(reply.text)).toEqual({ event: 'order.paid' })
    })

    it('answers 500 raw_body_unavailable after c.req.formData(): parsed fields are not the bytes sent', async () => {
      const app = new Hono()
      app.post(
        '/hooks',
        readFirst((c) => c.req.formData()),
        webhook({ auth: { mode: 'none' } }),
        (c) => c.json(null),
      )
      const reply = await (await run(app))({
        path: '/hooks',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'a=1',
      })
      expect(reply.status).toBe(500)
      expect(JSON.parse(reply.text).error).toBe('raw_body_unavailable')
    })
  })

  describe('mounted with app.route()', () => {
    it("gives resolvers the request's full path and query", async () => {
      const seen: string[] = []
      const secret = (req: WebhookRequest) => {
        seen.push(`${req.url.pathname}${req.url.search}`)
        return vector.secret
      }
      const hooks = new Hono().post('/hooks', webhook({ auth: { mode: 'secret', secret } }), (c) => c.json(null))
      const app = new Hono().route('/api/v1', hooks)
      const reply = await (await run(app))({ ...signed, path: '/api/v1/hooks?tenant=acme' })
      expect(reply.status).toBe(200)
      expect(seen).toEqual(['/api/v1/hooks?tenant=acme'])
    })
  })

  describe("onError: 'throw'", () => {
    it('throws an HTTPException carrying the answer, with the WebhookError as its cause', async () => {
      const caught: unknown[] = []
      const app = new Hono()
      app.post('/hooks', webhook({ auth: { mode: 'basic', username: 'u', password: 'p' }, onError: 'throw' }), (c) => c.json(null))
      app.onError((error, c) => {
        caught.push(error)
        return c.text('handled by app.onError', 418)
      })
      const reply = await (await run(app))(signed)
      expect(reply.status).toBe(418)
      expect(caught[0]).toBeInstanceOf(HTTPException)
      const exception = caught[0] as HTTPException
      expect(exception.status).toBe(401)
      expect(exception.cause).toBeInstanceOf(WebhookError)
      expect(exception.cause).toMatchObject({ code: 'missing_credentials' })
    })

    it("is answered by Hono's own error handling exactly as 'respond' would", async () => {
      const app = new Hono()
      app.post('/hooks', webhook({ auth: { mode: 'basic', username: 'u', password: 'p' }, onError: 'throw' }), (c) => c.json(null))
      const reply = await (await run(app))(signed)
      expect(reply.status).toBe(401)
      expect(reply.headers['www-authenticate']).toBe('Basic realm="webhook", charset="UTF-8"')
      expect(reply.headers['cache-control']).toBe('no-store')
      expect(JSON.parse(reply.text).error).toBe('missing_credentials')
    })
  })

  describe('setup', () => {
    it('throws a TypeError for an unknown onError', () => {
      expect(() => webhook({ auth, onError: 'next' as 'throw' })).toThrow(/^@hookguard\/hono: onError/)
    })

    it("throws a TypeError for a token endpoint outside mode 'oauth2'", () => {
      expect(() => tokenEndpoint({ auth })).toThrow(TypeError)
    })
  })
})
