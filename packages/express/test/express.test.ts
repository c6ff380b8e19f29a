import type { IncomingMessage } from 'node:http'
import { tokenEndpoint, WebhookError, type WebhookRequest, webhook } from '@hookguard/express'
import { auth, delivered, itReadsTheOrigin, serverPerTest, signed, vector } from '@hookguard/testkit/adapter-tests'
import express5, { type ErrorRequestHandler, type RequestHandler } from 'express'
import express4 from 'express4'
import { describe, expect, it, vi } from 'vitest'

// What differs per framework: parsers mounted before webhook(), mount paths, next(), onError.

const serve = serverPerTest()

/** Answers what the handler after webhook() saw. */
const echo: RequestHandler = (req, res) => {
  const raw = req.webhook === undefined ? undefined : new TextDecoder().decode(req.webhook.rawBody)
  res.json({ payload: req.body, raw })
}

describe.each([
  ['Express 4', express4],
  ['Express 5', express5],
])('%s', (_, express) => {
  describe('rawBody', () => {
    it('is a Buffer, whether webhook() read the body or a parser kept a copy of another kind', async () => {
      const kinds: boolean[] = []
      const record: RequestHandler = (req, res) => {
        kinds.push(Buffer.isBuffer(req.webhook?.rawBody))
        res.sendStatus(204)
      }
      const read = express()
      read.post('/hooks', webhook({ auth }), record)
      const kept = express()
      kept.use((req, _res, next) => {
        // A copy kept as a plain Uint8Array, as a hand-written parser might.
        const chunks: Buffer[] = []
        req.on('data', (chunk: Buffer) => chunks.push(chunk))
        req.on('end', () => {
          Object.assign(req, { rawBody: new Uint8Array(Buffer.concat(chunks)) })
          next()
        })
      })
      kept.post('/hooks', webhook({ auth }), record)
      for (const app of [read, kept]) expect((await (await serve(app)).send(signed)).status).toBe(204)
      expect(kinds).toEqual([true, true])
    })
  })

  describe("the request's origin, for resolvers that pick a tenant by host name", () => {
    itReadsTheOrigin("'trust proxy'", async (trusted, headers, secret) => {
      const app = express()
      app.set('trust proxy', trusted)
      app.post('/hooks', webhook({ auth: { mode: 'secret', secret } }), (_req, res) => {
        res.sendStatus(204)
      })
      const reply = await (await serve(app)).send({ ...signed, headers: { ...signed.headers, ...headers } })
      expect(reply.status).toBe(204)
    })
  })

  describe('after a body parser', () => {
    it('answers 500 raw_body_unavailable after express.json(), and says how to mount it', async () => {
      const app = express()
      app.use(express.json())
      app.post('/hooks', webhook({ auth }), echo)
      const reply = await (await serve(app)).send(signed)
      expect(reply.status).toBe(500)
      const answer = JSON.parse(reply.text)
      expect(answer.error).toBe('raw_body_unavailable')
      expect(answer.message).toContain('express.json({ verify')
    })

    it('tells the app once per middleware, on the console, with the fix and nothing of the request', async () => {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
      try {
        const app = express()
        app.use(express.json())
        app.post('/hooks', webhook({ auth }), echo)
        app.post('/other', webhook({ auth }), echo)
        const target = await serve(app)
        for (const path of ['/hooks', '/hooks', '/other', '/other']) expect((await target.send({ ...signed, path })).status).toBe(500)
        expect(warn).toHaveBeenCalledTimes(2)
        for (const [line] of warn.mock.calls) {
          expect(line).toMatch(/^@hookguard\/express: .*raw_body_unavailable.*Mount webhook\(\) before express\.json\(\)/)
          expect(line).toContain('express.json({ verify')
          for (const part of [vector.secret, vector.signature, vector.body, JSON.stringify(JSON.parse(vector.body))])
            expect(line).not.toContain(part)
        }
      } finally {
        warn.mockRestore()
      }
    })

    it('verifies the raw copy that express.json({ verify }) keeps in req.rawBody', async () => {
      const app = express()
      app.use(express.json({ verify: (req: IncomingMessage, _res, buf: Buffer) => Object.assign(req, { rawBody: buf }) }))
      app.post('/hooks', webhook({ auth }), echo)
      const reply = await (await serve(app)).send(signed)
      expect(reply.status).toBe(200)
      expect(JSON.parse(reply.text)).toEqual(delivered)
    })

    it('verifies the Buffer that express.raw() leaves in req.body', async () => {
      const app = express()
      app.use(express.raw({ type: '*/*' }))
      app.post('/hooks', webhook({ auth }), echo)
      const reply = await (await serve(app)).send(signed)
      expect(reply.status).toBe(200)
      expect(JSON.parse(reply.text)).toEqual(delivered)
    })

    it('verifies the string that express.text() leaves in req.body', async () => {
      const app = express()
      app.use(express.text({ type: '*/*' }))
      app.post('/hooks', webhook({ auth }), echo)
      const reply = await (await serve(app)).send(signed)
      expect(reply.status).toBe(200)
      expect(JSON.parse(reply.text)).toEqual(delivered)
    })

    it('reads the body itself when express.json() skipped it (a form, in mode oauth2)', async () => {
      const options = { auth: { mode: 'oauth2', appId: 'wx-app-1042', secret: 'oauth-secret-4f1d9a' } } as const
      const app = express()
      app.use(express.json())
      app.get('/token', tokenEndpoint(options))
      app.post('/hooks', webhook(options), echo)
      const server = await serve(app)
      const token = JSON.parse(
        (await server.send({ method: 'GET', path: '/token?appid=wx-app-1042&secret=oauth-secret-4f1d9a&grant_type=client_credentials' }))
          .text,
      ).access_token
      const form = `event=order.paid&access_token=${token}`
      const reply = await server.send({ path: '/hooks', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form })
      expect(reply.status).toBe(200)
      expect(JSON.parse(reply.text)).toEqual({ payload: { event: 'order.paid' }, raw: form })
    })
  })

  describe('mounted on a router under a path', () => {
    it("gives resolvers the request's full path and query (req.originalUrl)", async () => {
      const seen: string[] = []
      const secret = (req: WebhookRequest) => {
        seen.push(`${req.url.pathname}${req.url.search}`)
        return vector.secret
      }
      const router = express.Router()
      router.post('/hooks', webhook({ auth: { mode: 'secret', secret } }), echo)
      const app = express()
      app.use('/api/v1', router)
      const reply = await (await serve(app)).send({ ...signed, path: '/api/v1/hooks?tenant=acme' })
      expect(reply.status).toBe(200)
      expect(seen).toEqual(['/api/v1/hooks?tenant=acme'])
    })
  })

  describe('next()', () => {
    it('falls through to the next middleware after a verified delivery', async () => {
      const app = express()
      app.use(webhook({ auth }))
      app.use((req, _res, next) => {
        req.headers['x-seen-by'] = 'second middleware'
        next()
      })
      app.post('/hooks', (req, res) => res.json({ seenBy: req.headers['x-seen-by'], event: req.webhook?.payload }))
      const reply = await (await serve(app)).send(signed)
      expect(JSON.parse(reply.text)).toEqual({ seenBy: 'second middleware', event: JSON.parse(vector.body) })
    })

    it("passes a resolver's error to the error middleware (Express 4 ignores rejected promises)", async () => {
      const failure = new Error('the tenant table is offline')
      const app = express()
      app.post(
        '/hooks',
        webhook({
          auth: {
            mode: 'secret',
            secret: () => {
              throw failure
            },
          },
        }),
        echo,
      )
      const caught: unknown[] = []
      const onError: ErrorRequestHandler = (error, _req, res, _next) => {
        caught.push(error)
        res.status(503).end()
      }
      app.use(onError)
      const reply = await (await serve(app)).send(signed)
      expect(reply.status).toBe(503)
      expect(caught).toEqual([failure])
    })
  })

  describe("onError: 'next'", () => {
    it('hands the WebhookError, with its status and headers, to the error middleware', async () => {
      const app = express()
      app.post('/hooks', webhook({ auth: { mode: 'basic', username: 'u', password: 'p' }, onError: 'next' }), echo)
      const caught: unknown[] = []
      const onError: ErrorRequestHandler = (error, _req, res, _next) => {
        caught.push(error)
        res.status(error.status).set(error.headers).json({ code: error.code })
      }
      app.use(onError)
      const reply = await (await serve(app)).send(signed)
      expect(reply.status).toBe(401)
      expect(reply.headers['www-authenticate']).toBe('Basic realm="webhook", charset="UTF-8"')
      expect(JSON.parse(reply.text)).toEqual({ code: 'missing_credentials' })
      expect(caught[0]).toBeInstanceOf(WebhookError)
    })

    it("is answered by Express's own error handler when the app has none", async () => {
      const app = express()
      app.post('/hooks', webhook({ auth, onError: 'next' }), echo)
      const reply = await (await serve(app)).send({ ...signed, headers: {} })
      expect(reply.status).toBe(401)
    })
  })

  describe('setup', () => {
    it('throws a TypeError for an unknown onError', () => {
      expect(() => webhook({ auth, onError: 'throw' as 'next' })).toThrow(/^@hookguard\/express: onError/)
    })

    it("throws a TypeError for a token endpoint outside mode 'oauth2'", () => {
      expect(() => tokenEndpoint({ auth })).toThrow(TypeError)
    })

    it('throws a TypeError for missing options', () => {
      expect(() => webhook(undefined as never)).toThrow(/^@hookguard\/express: /)
    })
  })
})
