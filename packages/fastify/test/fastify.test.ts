import { Writable } from 'node:stream'
import { DRAIN_MAX_BYTES } from '@hookguard/core'
import {
  type FastifyWebhookOptions,
  frameworkErrors,
  logSerializers,
  notFoundHandler,
  requireWebhook,
  tokenEndpoint,
  WebhookError,
  webhook,
} from '@hookguard/fastify'
import { auth, delivered, itReadsTheOrigin, signed, vector } from '@hookguard/testkit/adapter-tests'
import type { Outgoing } from '@hookguard/testkit/http'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'

// What differs in Fastify: the plugin's scope, Fastify's own parsers and bodyLimit beside it,
// onError through setErrorHandler, and Fastify's request log. The HTTP behaviour itself is the
// conformance suite's (test/conformance), run against a Fastify app as well.

const JSON_TYPE = { 'content-type': 'application/json' }
let app: FastifyInstance | undefined
const opened: FastifyInstance[] = []
afterEach(async () => {
  await app?.close()
  app = undefined
  for (const instance of opened.splice(0)) await instance.close()
})

/**
 * An app with `/hooks` behind `webhook(options)` in a plugin of its own, beside `/other`, a route
 * of the rest of the app; both answer the body they were given.
 */
async function build(options: FastifyWebhookOptions, server: FastifyServerOptions = {}, inScope?: (hooks: FastifyInstance) => void) {
  app = Fastify(server)
  app.post('/other', async (request) => ({ body: request.body }))
  app.register(async (hooks) => {
    await hooks.register(webhook(options))
    inScope?.(hooks)
    hooks.post('/hooks', async (request) => {
      const { payload, rawBody } = requireWebhook(request)
      return { payload, raw: rawBody.toString('utf8') }
    })
  })
  await app.ready()
  return app
}

/** Sends a request as the shared adapter tests write it, through Fastify's inject (no port). */
const inject = (target: FastifyInstance, { path, headers, body }: Outgoing) =>
  target.inject({ method: 'POST', url: path, headers, payload: typeof body === 'string' || body === undefined ? body : Buffer.from(body) })

describe("the request's origin, for resolvers that pick a tenant by host name", () => {
  itReadsTheOrigin('trustProxy', async (trustProxy, headers, secret) => {
    const target = await build({ auth: { mode: 'secret', secret } }, { trustProxy })
    expect((await inject(target, { ...signed, headers: { ...signed.headers, ...headers } })).statusCode).toBe(200)
  })
})

describe('the scope of webhook()', () => {
  it('delivers the raw bytes in its scope, while the rest of the app keeps parsing JSON itself', async () => {
    const target = await build({ auth })
    const hook = await inject(target, signed)
    expect(hook.statusCode).toBe(200)
    expect(hook.json()).toEqual(delivered)

    const other = await inject(target, { path: '/other', headers: JSON_TYPE, body: '{"a":[1,2]}' })
    expect(other.statusCode).toBe(200)
    expect(other.json()).toEqual({ body: { a: [1, 2] } })
  })

  it('leaves Fastify its own answers outside the scope: 400 for bad JSON, 415 for an unknown type', async () => {
    const target = await build({ auth: { mode: 'none' } })
    expect((await inject(target, { path: '/other', headers: JSON_TYPE, body: '{' })).json()).toMatchObject({
      code: 'FST_ERR_CTP_INVALID_JSON_BODY',
    })
    const unknown = await inject(target, { path: '/other', headers: { 'content-type': 'application/xml' }, body: '<a/>' })
    expect(unknown.statusCode).toBe(415)
  })

  it("answers hookguard's invalid_json, not Fastify's 415, for a type Fastify has no parser for", async () => {
    const target = await build({ auth: { mode: 'none' } })
    const reply = await inject(target, { path: '/hooks', headers: { 'content-type': 'application/xml' }, body: '<a/>' })
    expect(reply.statusCode).toBe(400)
    expect(reply.json()).toEqual({ error: 'invalid_json', message: expect.any(String) })
  })

  it("leaves an address with no route to the scope's not-found handler, unverified", async () => {
    app = Fastify()
    app.register(
      async (hooks) => {
        await hooks.register(webhook({ auth }))
        hooks.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: 'no_such_hook' }))
        hooks.post('/orders', async () => ({ ok: true }))
      },
      { prefix: '/hooks' },
    )
    const reply = await inject(app, { ...signed, path: '/hooks/refunds', headers: JSON_TYPE })
    expect(reply.statusCode).toBe(404)
    expect(reply.json()).toEqual({ error: 'no_such_hook' })
  })

  it('leaves request.webhook absent on a route outside its scope, where requireWebhook answers 500 before the handler uses the body', async () => {
    app = Fastify()
    const seen: unknown[] = []
    app.post('/parent', async (request) => {
      seen.push(request.webhook)
      return { payload: requireWebhook(request).payload }
    })
    app.register(async (sibling) => {
      sibling.post('/sibling', async (request) => ({ payload: requireWebhook(request).payload }))
    })
    app.register(async (hooks) => {
      await hooks.register(webhook({ auth }))
      hooks.post('/hooks', async (request) => ({ payload: requireWebhook(request).payload }))
    })
    const forged = { headers: JSON_TYPE, body: '{"forged":true}' }
    for (const path of ['/parent', '/sibling']) {
      const reply = await inject(app, { ...forged, path })
      expect(reply.statusCode, path).toBe(500)
      expect(reply.json(), path).toMatchObject({
        code: 'HOOKGUARD_NOT_VERIFIED',
        message: expect.stringMatching(/^@hookguard\/fastify: .*outside the scope of webhook\(\)/),
      })
      expect(reply.body).not.toContain('forged')
    }
    expect(seen).toEqual([undefined])
    const verified = await inject(app, signed)
    expect(verified.statusCode).toBe(200)
    expect(verified.json()).toEqual({ payload: delivered.payload })
    expect((await inject(app, { ...forged, path: '/hooks' })).statusCode).toBe(401)
  })

  it('refuses a prefix given at registration, which would otherwise verify every route of the parent', async () => {
    app = Fastify()
    app.post('/other', async () => ({ ok: true }))
    app.register(webhook({ auth }), { prefix: '/hooks' })
    const ready = app.ready()
    await expect(ready).rejects.toThrow(TypeError)
    await expect(ready).rejects.toThrow(/^@hookguard\/fastify: .*prefix.*app\.register\(async/)
  })

  it("leaves Fastify's 415 for a Content-Type that is no media type, answered before any hook that reads the body", async () => {
    const target = await build({ auth })
    const reply = await inject(target, { ...signed, headers: { ...signed.headers, 'content-type': 'json' } })
    expect(reply.statusCode).toBe(415)
    expect(reply.json()).toMatchObject({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' })
  })

  it('reads a form-urlencoded body itself, for a token sent as a form field, with no form parser in the app', async () => {
    const target = await build({ auth: { mode: 'none' } })
    const reply = await inject(target, {
      path: '/hooks',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '{"a":1}',
    })
    expect(reply.statusCode).toBe(200)
    expect(reply.json()).toEqual({ payload: { a: 1 }, raw: '{"a":1}' })
  })

  it('answers 500 raw_body_unavailable, saying how to mount it, when a parser added in its scope read the body first', async () => {
    const target = await build({ auth }, {}, (hooks) =>
      hooks.addContentTypeParser('application/json', { parseAs: 'string' }, (_r, body, done) => done(null, body)),
    )
    const reply = await inject(target, signed)
    expect(reply.statusCode).toBe(500)
    expect(reply.json()).toEqual({ error: 'raw_body_unavailable', message: expect.stringContaining('addContentTypeParser') })
  })
})

describe("hookguard's maxBodySize beside Fastify's bodyLimit", () => {
  const body = JSON.stringify({ text: 'x'.repeat(500) })

  it('delivers a body over bodyLimit but within maxBodySize, which the rest of the app refuses', async () => {
    const target = await build({ auth: { mode: 'none' }, maxBodySize: 1000 }, { bodyLimit: 100 })
    const hook = await inject(target, { path: '/hooks', headers: JSON_TYPE, body })
    expect(hook.statusCode).toBe(200)
    expect(hook.json().raw).toBe(body)
    const other = await inject(target, { path: '/other', headers: JSON_TYPE, body })
    expect(other.json()).toMatchObject({ statusCode: 413, code: 'FST_ERR_CTP_BODY_TOO_LARGE' })
  })

  it("answers hookguard's 413 payload_too_large, not Fastify's, over maxBodySize", async () => {
    const target = await build({ auth: { mode: 'none' }, maxBodySize: 100 }, { bodyLimit: 50 })
    const reply = await inject(target, { path: '/hooks', headers: JSON_TYPE, body })
    expect(reply.statusCode).toBe(413)
    expect(reply.json()).toEqual({ error: 'payload_too_large', message: expect.any(String) })
    expect(reply.headers['cache-control']).toBe('no-store')
  })
})

describe("onError: 'throw'", () => {
  it('throws the WebhookError for setErrorHandler, and the handler never runs', async () => {
    const caught: unknown[] = []
    const target = await build({ auth, onError: 'throw' }, {}, (hooks) =>
      hooks.setErrorHandler((error, _request, reply) => {
        caught.push(error)
        return reply.code(418).send({ caught: true })
      }),
    )
    const reply = await inject(target, { ...signed, headers: JSON_TYPE })
    expect(reply.statusCode).toBe(418)
    expect(caught).toHaveLength(1)
    expect(caught[0]).toBeInstanceOf(WebhookError)
    expect(caught[0]).toMatchObject({ code: 'missing_signature', statusCode: 401 })
  })

  it("is answered by Fastify's default error handler with the error's status and headers", async () => {
    const target = await build({ auth: { mode: 'basic', username: 'hook-user', password: 'correct horse' }, onError: 'throw' })
    const reply = await inject(target, { path: '/hooks', headers: JSON_TYPE, body: '{}' })
    expect(reply.statusCode).toBe(401)
    expect(reply.json()).toMatchObject({ code: 'missing_credentials', statusCode: 401 })
    expect(reply.headers['www-authenticate']).toMatch(/^Basic realm=/)
    expect(reply.headers['cache-control']).toBe('no-store')
  })

  it("keeps Connection: close in Fastify's answer to a body it did not read", async () => {
    const target = await build({ auth: { mode: 'none' }, maxBodySize: 10, onError: 'throw' })
    // Declared past what a refusal drains: refused unread.
    const declared = String(10 + DRAIN_MAX_BYTES + 1)
    const reply = await inject(target, {
      path: '/hooks',
      headers: { ...JSON_TYPE, 'content-length': declared },
      body: '{"text":"over ten bytes"}',
    })
    expect(reply.statusCode).toBe(413)
    expect(reply.json()).toMatchObject({ code: 'payload_too_large' })
    expect(reply.headers.connection).toBe('close')
  })

  it("is refused at setup unless 'respond' or 'throw'", () => {
    // @ts-expect-error Fastify takes errors thrown from hooks; there is no 'next'
    expect(() => webhook({ auth, onError: 'next' })).toThrow(/^@hookguard\/fastify: /)
  })
})

describe("Fastify's request log", () => {
  const APP_SECRET = 'app-secret-for-the-log-4417'
  const oauth = { auth: { mode: 'oauth2', appId: 'log-app', secret: APP_SECRET } } as const

  /** An app with a real Fastify logger writing to memory; `serializers` as the app passes them. */
  async function logged(serializers?: typeof logSerializers) {
    const lines: string[] = []
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk))
        done()
      },
    })
    const instance = Fastify({ logger: { level: 'info', stream, ...(serializers ? { serializers } : {}) } })
    // Closed after the test, however many a test starts.
    opened.push(instance)
    instance.register(tokenEndpoint(oauth), { prefix: '/token' })
    instance.register(async (hooks) => {
      await hooks.register(webhook(oauth))
      hooks.post('/hooks', async () => ({ ok: true }))
    })
    await instance.ready()
    const urls = () => lines.flatMap((line) => (JSON.parse(line) as { req?: { url: string } }).req?.url ?? [])
    return { app: instance, lines, urls }
  }

  it("writes hookguard's routes without the app secret or the access token, even with the app's serializers left as Fastify ships them", async () => {
    const { app, lines, urls } = await logged()
    const token = await app.inject({ url: `/token?appid=log-app&secret=${APP_SECRET}&grant_type=client_credentials` })
    expect(token.statusCode).toBe(200)
    const accessToken = token.json().access_token as string
    const hook = await app.inject({
      method: 'POST',
      url: `/hooks?access_token=${accessToken}&tenant=acme`,
      headers: JSON_TYPE,
      payload: '{}',
    })
    expect(hook.statusCode).toBe(200)

    expect(urls()).toEqual(['/token?appid=log-app&grant_type=client_credentials', '/hooks?tenant=acme'])
    const log = lines.join('')
    expect(log).not.toContain(APP_SECRET)
    expect(log).not.toContain(accessToken)
  })

  it("writes every other route's URL without them too, once logSerializers is given to the logger", async () => {
    const { app, urls } = await logged(logSerializers)
    // A mistyped address: Fastify's 404, outside hookguard's routes.
    await app.inject({ method: 'POST', url: '/hook?access_token=leaked.token.value&tenant=acme', headers: JSON_TYPE, payload: '{}' })
    expect(urls()).toEqual(['/hook?tenant=acme'])
  })

  it("needs notFoundHandler to keep the URL out of Fastify's default 404 message and answer", async () => {
    const { app, lines } = await logged(logSerializers)
    const mistyped = { method: 'POST', url: '/hook?access_token=leaked.token.value', headers: JSON_TYPE, payload: '{}' } as const
    const reply = await app.inject(mistyped)
    // Fastify's own not-found handler writes `Route POST:/hook?access_token=… not found`, and answers it.
    expect(lines.join('')).toContain('leaked.token.value')
    expect(reply.body).toContain('leaked.token.value')
  })
})

describe('notFoundHandler and frameworkErrors, with logSerializers: the setup the README gives', () => {
  const APP_SECRET = 'app-secret-for-the-404-log-8812'
  const oauth = { auth: { mode: 'oauth2', appId: 'log-app', secret: APP_SECRET } } as const

  /** The README's app: logSerializers, notFoundHandler, frameworkErrors, the token address and the webhook address. */
  async function readmeApp() {
    const lines: string[] = []
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk))
        done()
      },
    })
    const instance = Fastify({ frameworkErrors, logger: { level: 'trace', stream, serializers: logSerializers } })
    opened.push(instance)
    instance.setNotFoundHandler(notFoundHandler)
    instance.register(tokenEndpoint(oauth), { prefix: '/webhooks/token' })
    instance.register(async (hooks) => {
      await hooks.register(webhook(oauth))
      hooks.post('/webhooks', async (_request, reply) => reply.code(204).send())
    })
    await instance.ready()
    return { app: instance, lines }
  }

  it('writes neither the app secret nor the access token in any log line, answer body or header', async () => {
    const { app, lines } = await readmeApp()
    const credentials = `appid=log-app&secret=${APP_SECRET}&grant_type=client_credentials`
    const token = await app.inject({ url: `/webhooks/token?${credentials}` })
    expect(token.statusCode).toBe(200)
    const accessToken = token.json().access_token as string
    const answers = [token.headers]
    lines.length = 0

    const requests = [
      // The right addresses (the token address's answer is where the token is given, of course).
      { method: 'GET', url: `/webhooks/token?${credentials}`, status: 200 },
      { method: 'POST', url: `/webhooks?access_token=${accessToken}`, status: 204 },
      // Mistyped addresses: Fastify's 404, for a POST and a GET.
      { method: 'POST', url: `/webhook?access_token=${accessToken}&tenant=acme`, status: 404 },
      { method: 'GET', url: `/webhook?access_token=${accessToken}`, status: 404 },
      { method: 'GET', url: `/webhooks/tokn?${credentials}`, status: 404 },
      { method: 'POST', url: `/webhook/token?${credentials}`, status: 404 },
      { method: 'GET', url: `/webhooks/token/x?${credentials}`, status: 404 },
      { method: 'POST', url: `/?client_secret=${APP_SECRET}`, status: 404 },
      // A query mark the router does not see as one: an escaped `?`, a `;`, a name in capitals.
      { method: 'POST', url: `/webhook%3Faccess_token=${accessToken}`, status: 404 },
      { method: 'POST', url: `/webhook%3faccess_token=${accessToken}&tenant=acme`, status: 404 },
      { method: 'POST', url: `/webhook;access_token=${accessToken}`, status: 404 },
      { method: 'POST', url: `/webhook?ACCESS_TOKEN=${accessToken}`, status: 404 },
      { method: 'GET', url: `/webhooks/tokn%3F${credentials}`, status: 404 },
      { method: 'GET', url: `/webhooks/tokn;${credentials}`, status: 404 },
      { method: 'GET', url: `/webhooks/tokn?appid=log-app&Secret=${APP_SECRET}`, status: 404 },
      { method: 'GET', url: `/webhooks/tokn?appid=log-app;secret=${APP_SECRET}`, status: 404 },
      // A webhook address with a query of its own, the token appended after a second `?`.
      { method: 'POST', url: `/webhooks?tenant=1?access_token=${accessToken}`, status: 401 },
      { method: 'POST', url: `/webhook?tenant=1?access_token=${accessToken}`, status: 404 },
      // An escaped `;`, a double-escaped `?`, a `/` or a `:` in place of the `?`.
      { method: 'POST', url: `/webhook%3Baccess_token=${accessToken}`, status: 404 },
      { method: 'POST', url: `/webhook%3baccess_token=${accessToken}&tenant=acme`, status: 404 },
      { method: 'POST', url: `/webhook%253Faccess_token=${accessToken}`, status: 404 },
      { method: 'POST', url: `/webhooks/access_token=${accessToken}`, status: 404 },
      { method: 'POST', url: `/webhooks:access_token=${accessToken}`, status: 404 },
      { method: 'GET', url: `/webhooks/token:secret=${APP_SECRET}`, status: 404 },
      // Credential names with spaces, brackets or an escaped `=` about them, at both addresses.
      ...['+access_token=', 'access_token+=', 'access_token%20=', '%20access_token=', 'access_token%3D', 'access_token[]='].flatMap(
        (name) => [
          { method: 'POST', url: `/webhooks?${name}${accessToken}`, status: 401 },
          { method: 'POST', url: `/webhook?${name}${accessToken}`, status: 404 },
          { method: 'POST', url: `/webhook?tenant=1?${name}${accessToken}`, status: 404 },
        ],
      ),
      { method: 'GET', url: `/webhooks/token?appid=log-app&client_secret%3D${APP_SECRET}&grant_type=client_credentials`, status: 400 },
      { method: 'GET', url: `/webhooks/tokn?appid=log-app&client_secret%3D${APP_SECRET}`, status: 404 },
      // A path that is no valid percent-encoding: Fastify's FST_ERR_BAD_URL, for a POST and a GET.
      { method: 'POST', url: `/webhooks%zz?access_token=${accessToken}`, status: 400 },
      { method: 'GET', url: `/webhooks/token%?${credentials}`, status: 400 },
      { method: 'GET', url: `/webhooks/%E0%A4%A?client_secret=${APP_SECRET}`, status: 400 },
    ] as const
    for (const { method, url, status } of requests) {
      const reply = await app.inject({ method, url, headers: JSON_TYPE, payload: method === 'GET' ? undefined : '{}' })
      // Soft: a leak is reported for every request that has one, not the first only.
      expect.soft(reply.statusCode, `${method} ${url}`).toBe(status)
      answers.push(reply.headers)
      const seen = `${status === 200 ? '' : reply.body}\n${JSON.stringify(reply.headers)}`
      expect.soft(`${reply.body}\n${seen}`, `${method} ${url}`).not.toContain(APP_SECRET)
      expect.soft(seen, `${method} ${url}`).not.toContain(accessToken)
    }

    const log = lines.join('')
    // Every request was logged (incoming and completed, and a line per 404), and none carries them.
    expect(lines.length).toBeGreaterThanOrEqual(requests.length * 2)
    expect(lines.filter((line) => line.includes(APP_SECRET) || line.includes(accessToken))).toEqual([])
    expect(log).toContain('Route POST:/webhook?tenant=acme not found')
    expect(log).toContain('Route GET:/webhooks/tokn?appid=log-app&grant_type=client_credentials not found')
    expect(log).toContain('Route POST:/webhook%3F not found')
    expect(log).toContain('Route GET:/webhooks/tokn; not found')
    expect(log).toContain('Route POST:/webhook?tenant=1 not found')
    expect(log).toContain('Route POST:/webhook%3B not found')
    expect(log).toContain('Route POST:/webhook%25 not found')
    expect(log).toContain('Route POST:/webhooks/ not found')
    expect(log).toContain('"url":"/webhooks?tenant=1"')
    expect(log).toContain('"url":"/webhooks%zz"')
    expect(log).toContain('"url":"/webhooks/token%?appid=log-app&grant_type=client_credentials"')
  })

  it("answers a URL that is no valid percent-encoding in the shape of Fastify's own 400, without the URL", async () => {
    const { app, lines } = await readmeApp()
    const reply = await app.inject({
      method: 'POST',
      url: `/webhooks%zz?access_token=a.b.c&tenant=acme`,
      headers: JSON_TYPE,
      payload: '{}',
    })
    expect(reply.statusCode).toBe(400)
    expect(reply.json()).toEqual({
      error: 'Bad Request',
      code: 'FST_ERR_BAD_URL',
      message: 'The URL is not a valid url component',
      statusCode: 400,
    })
    const logged = lines.map((line) => JSON.parse(line) as { msg: string; code?: string; level: number })
    expect(logged).toContainEqual(
      expect.objectContaining({ level: 30, code: 'FST_ERR_BAD_URL', msg: 'The URL is not a valid url component' }),
    )
    expect(lines.join('')).not.toContain('a.b.c')
  })

  it("answers a parameter over maxParamLength in the shape of Fastify's own 414, without the URL", async () => {
    const instance = Fastify({ frameworkErrors, maxParamLength: 8 })
    opened.push(instance)
    instance.get('/files/:name', async () => ({ ok: true }))
    const reply = await instance.inject({ url: `/files/x%3Fsecret=${APP_SECRET}` })
    expect(reply.statusCode).toBe(414)
    expect(reply.json()).toEqual({
      error: 'Bad Request',
      code: 'FST_ERR_MAX_PARAM_LENGTH',
      message: 'The URL is exceeding the max param length',
      statusCode: 414,
    })
  })

  it("answers in the shape of Fastify's own 404, the URL without its credentials", async () => {
    const { app } = await readmeApp()
    const reply = await app.inject({ method: 'GET', url: `/nowhere?secret=${APP_SECRET}&page=2` })
    expect(reply.statusCode).toBe(404)
    expect(reply.json()).toEqual({ message: 'Route GET:/nowhere?page=2 not found', error: 'Not Found', statusCode: 404 })
  })
})

describe('tokenEndpoint()', () => {
  it('answers at its prefix, for a POST form and Basic client authentication, with no form parser in the app', async () => {
    app = Fastify()
    app.register(tokenEndpoint({ auth: { mode: 'oauth2', appId: 'app', secret: vector.secret } }), { prefix: '/webhooks/token' })
    const basic = `Basic ${Buffer.from(`app:${encodeURIComponent(vector.secret)}`).toString('base64')}`
    const reply = await app.inject({
      method: 'POST',
      url: '/webhooks/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      payload: 'grant_type=client_credentials',
    })
    expect(reply.statusCode).toBe(200)
    expect(reply.json()).toMatchObject({ token_type: 'Bearer', expires_in: 7200 })
  })

  it('is refused at setup in a mode other than oauth2', () => {
    expect(() => tokenEndpoint({ auth })).toThrow(/^@hookguard\/fastify: /)
  })
})
