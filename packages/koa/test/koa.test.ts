import { type KoaWebhookOptions, tokenEndpoint, WebhookError, type WebhookRequest, webhook } from '@hookguard/koa'
import { auth, delivered, itReadsTheOrigin, serverPerTest, signed, vector } from '@hookguard/testkit/adapter-tests'
import type { Target } from '@hookguard/testkit/http'
import { bodyParser } from '@koa/bodyparser'
import Koa3, { type Middleware } from 'koa'
import koaBodyParser from 'koa-bodyparser'
import Koa2 from 'koa2'
import { describe, expect, it, vi } from 'vitest'

// What differs per framework: parsers mounted before webhook(), mount paths, next(), onError.

const listen = serverPerTest()

/** Serves `middleware` in order, then a handler that answers what webhook() delivered. */
async function serve(Koa: typeof Koa3, ...middleware: Middleware[]): Promise<Target> {
  const app = new Koa()
  app.silent = true
  for (const fn of middleware) app.use(fn)
  app.use((ctx) => {
    ctx.body = { payload: ctx.request.body, raw: ctx.request.rawBody }
  })
  return listen(app.callback())
}

/** A middleware that catches what the ones after it throw, records it, and answers `status`. */
function catching(status: number): { caught: unknown[]; catcher: Middleware } {
  const caught: unknown[] = []
  const catcher: Middleware = async (ctx, next) => {
    try {
      await next()
    } catch (error) {
      caught.push(error)
      ctx.status = status
    }
  }
  return { caught, catcher }
}

describe.each([
  ['Koa 2', Koa2],
  ['Koa 3', Koa3],
])('%s', (_, Koa) => {
  describe('after a body parser', () => {
    it('verifies the raw copy that koa-bodyparser keeps in ctx.request.rawBody', async () => {
      const reply = await (await serve(Koa, koaBodyParser(), webhook({ auth }))).send(signed)
      expect(reply.status).toBe(200)
      expect(JSON.parse(reply.text)).toEqual(delivered)
    })

    it('verifies the raw copy that @koa/bodyparser keeps in ctx.request.rawBody', async () => {
      const reply = await (await serve(Koa, bodyParser(), webhook({ auth }))).send(signed)
      expect(reply.status).toBe(200)
      expect(JSON.parse(reply.text)).toEqual(delivered)
    })

    it('answers 500 raw_body_unavailable after a middleware that read the body and kept no copy, and says how to mount it', async () => {
      const consume: Middleware = async (ctx, next) => {
        const chunks: Buffer[] = []
        for await (const chunk of ctx.req) chunks.push(chunk)
        ctx.request.body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
        await next()
      }
      const reply = await (await serve(Koa, consume, webhook({ auth }))).send(signed)
      expect(reply.status).toBe(500)
      const answer = JSON.parse(reply.text)
      expect(answer.error).toBe('raw_body_unavailable')
      expect(answer.message).toContain('ctx.request.rawBody')
    })

    it('tells the app once per middleware, on the console, with the fix and nothing of the request', async () => {
      const consume: Middleware = async (ctx, next) => {
        for await (const _chunk of ctx.req) {
          // Read and dropped, as a parser that keeps no raw copy leaves it.
        }
        await next()
      }
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
      try {
        const first = await serve(Koa, consume, webhook({ auth }))
        const second = await serve(Koa, consume, webhook({ auth }))
        for (const target of [first, first, second, second]) expect((await target.send(signed)).status).toBe(500)
        expect(warn).toHaveBeenCalledTimes(2)
        for (const [line] of warn.mock.calls) {
          expect(line).toMatch(/^@hookguard\/koa: .*raw_body_unavailable.*Mount webhook\(\) before your body parser/)
          expect(line).toContain('ctx.request.rawBody')
          for (const part of [vector.secret, vector.signature, vector.body, JSON.stringify(JSON.parse(vector.body))])
            expect(line).not.toContain(part)
        }
      } finally {
        warn.mockRestore()
      }
    })

    it('reads the body itself when a parser skipped it (koa-bodyparser sets ctx.request.body to {} for a type it does not parse)', async () => {
      const reply = await (await serve(Koa, koaBodyParser({ enableTypes: ['form'] }), webhook({ auth }))).send(signed)
      expect(reply.status).toBe(200)
      expect(JSON.parse(reply.text)).toEqual(delivered)
    })
  })

  describe('mounted under a path', () => {
    it("gives resolvers the request's full path and query (ctx.originalUrl)", async () => {
      const seen: string[] = []
      const secret = (req: WebhookRequest) => {
        seen.push(`${req.url.pathname}${req.url.search}`)
        return vector.secret
      }
      // What koa-mount does: the app below the mount point sees the path without its prefix.
      const mount: Middleware = async (ctx, next) => {
        ctx.path = ctx.path.replace(/^\/api\/v1/, '')
        await next()
      }
      const reply = await (await serve(Koa, mount, webhook({ auth: { mode: 'secret', secret } }))).send({
        ...signed,
        path: '/api/v1/hooks?tenant=acme',
      })
      expect(reply.status).toBe(200)
      expect(seen).toEqual(['/api/v1/hooks?tenant=acme'])
    })
  })

  describe('rawBody', () => {
    it('is a Buffer, whether webhook() read the body or a parser kept the text', async () => {
      const kinds: boolean[] = []
      const record: Middleware = (ctx) => {
        kinds.push(Buffer.isBuffer(ctx.state.webhook?.rawBody))
        ctx.status = 204
      }
      for (const before of [[], [bodyParser()]]) {
        const app = new Koa()
        app.silent = true
        for (const fn of before) app.use(fn)
        app.use(webhook({ auth }))
        app.use(record)
        expect((await (await listen(app.callback())).send(signed)).status).toBe(204)
      }
      expect(kinds).toEqual([true, true])
    })

    it('is the text the payload was parsed from: the body is decoded from UTF-8 once, not again for ctx.request.rawBody', async () => {
      const body = Buffer.from(signed.body as string)
      // Decoding 1 KiB that is not all ASCII costs about a twentieth of a request's instructions (bench/notes.md).
      const decode = vi.spyOn(Buffer.prototype, 'toString')
      try {
        const reply = await (await serve(Koa, webhook({ auth }))).send(signed)
        expect(reply.status).toBe(200)
        expect(JSON.parse(reply.text)).toEqual(delivered)
        const decodings = decode.mock.contexts.filter(
          (buffer, k) => body.equals(buffer) && [undefined, 'utf8', 'utf-8'].includes(decode.mock.calls[k]?.[0] as string | undefined),
        )
        expect(decodings).toHaveLength(1)
      } finally {
        decode.mockRestore()
      }
    })
  })

  describe("the request's origin, for resolvers that pick a tenant by host name", () => {
    itReadsTheOrigin('app.proxy', async (trusted, headers, secret) => {
      const app = new Koa()
      app.silent = true
      app.proxy = trusted
      app.use(webhook({ auth: { mode: 'secret', secret } }))
      app.use((ctx) => {
        ctx.status = 204
      })
      const reply = await (await listen(app.callback())).send({ ...signed, headers: { ...signed.headers, ...headers } })
      expect(reply.status).toBe(204)
    })
  })

  describe('next()', () => {
    it('runs the middleware after it only for a verified delivery, and waits for it', async () => {
      const after: string[] = []
      const record: Middleware = async (ctx, next) => {
        await next()
        after.push(`${ctx.status}`)
      }
      const server = await serve(Koa, record, webhook({ auth }))
      expect((await server.send(signed)).status).toBe(200)
      expect((await server.send({ ...signed, headers: {} })).status).toBe(401)
      expect(after).toEqual(['200', '401'])
    })

    it("lets a resolver's error reach Koa's error handling", async () => {
      const failure = new Error('the tenant table is offline')
      const { caught, catcher } = catching(503)
      const options: KoaWebhookOptions = {
        auth: {
          mode: 'secret',
          secret: () => {
            throw failure
          },
        },
      }
      const reply = await (await serve(Koa, catcher, webhook(options))).send(signed)
      expect(reply.status).toBe(503)
      expect(caught).toEqual([failure])
    })
  })

  describe("onError: 'throw'", () => {
    it('throws the WebhookError to the middleware before it', async () => {
      const { caught, catcher } = catching(418)
      const reply = await (await serve(Koa, catcher, webhook({ auth, onError: 'throw' }))).send({ ...signed, headers: {} })
      expect(reply.status).toBe(418)
      expect(caught[0]).toBeInstanceOf(WebhookError)
      expect(caught[0]).toMatchObject({ code: 'missing_signature', status: 401 })
    })

    it("is answered by Koa's own error handling with the error's status and headers", async () => {
      const options: KoaWebhookOptions = { auth: { mode: 'basic', username: 'u', password: 'p' }, onError: 'throw' }
      const reply = await (await serve(Koa, webhook(options))).send(signed)
      expect(reply.status).toBe(401)
      expect(reply.headers['www-authenticate']).toBe('Basic realm="webhook", charset="UTF-8"')
    })
  })

  describe('setup', () => {
    it('throws a TypeError for an unknown onError', () => {
      expect(() => webhook({ auth, onError: 'next' as 'throw' })).toThrow(/^@hookguard\/koa: onError/)
    })

    it("throws a TypeError for a token endpoint outside mode 'oauth2'", () => {
      expect(() => tokenEndpoint({ auth })).toThrow(TypeError)
    })
  })
})
