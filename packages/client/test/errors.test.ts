import { inspect } from 'node:util'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MAX_ANSWER_BYTES } from '../src/http.ts'
import { ApiError, type Fetch } from '../src/index.ts'
import { TOKEN_REQUEST_MS } from '../src/token-manager.ts'
import { APP_SECRET, CUSTOMERS_PATH, jsonResponse, PLUS_MOBILE, TOKEN_PATH, useService } from './harness.ts'

const { start, client } = useService()

const BASIC_CREDENTIALS = Buffer.from(`app-42:${APP_SECRET}`, 'utf8').toString('base64')

/** Everything an error shows: its message, its properties as JSON, and how Node prints it. */
function everything(error: unknown): string {
  return `${(error as Error).message}\n${JSON.stringify(error)}\n${inspect(error, { depth: 10 })}`
}

async function failure(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ApiError)
  return error as ApiError
}

describe('ApiError', () => {
  describe('when the token request is refused', () => {
    it("carries the status, the service's code and body, and the token path", async () => {
      const service = await start()
      const error = await failure(client(service, { appSecret: 'not-the-secret' }).customers.query({ mobile: '1' }))
      expect(error).toMatchObject({
        name: 'ApiError',
        code: 'invalid_client',
        status: 401,
        method: 'POST',
        path: TOKEN_PATH,
        body: { error: 'invalid_client', message: 'The app id or secret is not valid.' },
      })
      expect(error).toBeInstanceOf(Error)
      expect(error.message).toBe('POST /v2/oauth2/token answered 401 invalid_client: The app id or secret is not valid.')
    })

    it('never shows the secret, not even when the service echoes the credentials back', async () => {
      const service = await start()
      const echoing: Fetch = async (_url, init) => {
        const authorization = new Headers(init?.headers).get('authorization') ?? ''
        const decoded = Buffer.from(authorization.replace('Basic ', ''), 'base64').toString('utf8')
        return jsonResponse(401, {
          error: 'invalid_client',
          message: `Bad credentials ${authorization} (${decoded})`,
          echo: { [APP_SECRET]: APP_SECRET },
        })
      }
      const error = await failure(client(service, { fetch: echoing }).token())
      expect(everything(error)).not.toContain(APP_SECRET)
      expect(everything(error)).not.toContain(BASIC_CREDENTIALS)
      expect(error.message).toContain('[redacted]')
    })
  })

  describe('when a call is refused', () => {
    it("carries the status, the service's code and body, and the path without the query", async () => {
      const service = await start()
      const error = await failure(client(service).request('customers', { query: { id: PLUS_MOBILE } }))
      expect(error).toMatchObject({
        code: 'invalid_request',
        status: 400,
        method: 'GET',
        path: CUSTOMERS_PATH,
        body: { error: 'invalid_request', message: 'mobile is required.' },
      })
      // The query may hold personal data (a mobile number); the path is what logs need.
      expect(everything(error)).not.toContain('8613800138000')
    })

    it('answers 404 not_found for an endpoint the service does not have', async () => {
      const service = await start()
      const error = await failure(client(service).request('orders/7'))
      expect(error).toMatchObject({ code: 'not_found', status: 404, path: '/v2/orders/7' })
    })

    it('never shows the access token, not even when the service echoes it back', async () => {
      const service = await start()
      const echoing: Fetch = async (url, init) => {
        if (url.includes(TOKEN_PATH)) return fetch(url, init)
        const authorization = new Headers(init?.headers).get('authorization')
        return jsonResponse(403, { error: 'forbidden', message: `Token in ${authorization} lacks a scope`, details: [authorization] })
      }
      const error = await failure(client(service, { fetch: echoing }).customers.query({ mobile: '1' }))
      expect(error).toMatchObject({ code: 'forbidden', status: 403, body: { details: ['Bearer [redacted]'] } })
      expect(everything(error)).not.toContain('mock-token-1')
    })

    it('redacts the token of the retry as well as the first', async () => {
      const service = await start({ tokenTtl: 0 })
      const echoing: Fetch = async (url, init) => {
        const res = await fetch(url, init)
        if (url.includes(TOKEN_PATH)) return res
        return jsonResponse(res.status, {
          error: 'invalid_token',
          message: `${new Headers(init?.headers).get('authorization')} is expired`,
        })
      }
      const error = await failure(client(service, { fetch: echoing }).customers.query({ mobile: '1' }))
      expect(error.status).toBe(401)
      expect(everything(error)).not.toMatch(/mock-token-\d/)
    })

    it('uses the code http_error and keeps the text when the body names no code', async () => {
      const service = await start()
      const gateway: Fetch = (url, init) =>
        url.includes(TOKEN_PATH)
          ? fetch(url, init)
          : Promise.resolve(new Response('Bad gateway', { status: 502, headers: { 'content-type': 'text/html' } }))
      const error = await failure(client(service, { fetch: gateway }).customers.query({ mobile: '1' }))
      expect(error).toMatchObject({ code: 'http_error', status: 502, body: 'Bad gateway', path: CUSTOMERS_PATH })
    })
  })

  describe('when no answer arrives', () => {
    it('has the code network_error, status 0, and the cause', async () => {
      const service = await start()
      const api = client(service)
      await service.close()
      const error = await failure(api.customers.query({ mobile: '1' }))
      expect(error).toMatchObject({ code: 'network_error', status: 0, path: TOKEN_PATH })
      expect(error.cause).toBeDefined()
      expect(everything(error)).not.toContain(APP_SECRET)
    })
  })

  describe('when the service answers without end, or nests its answer deep', () => {
    /** A body of `chunk`s sent until the reader stops, counting what it pulled. */
    function endless(chunk: Uint8Array) {
      const pulled = { bytes: 0, cancelled: false }
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled.bytes += chunk.byteLength
          controller.enqueue(chunk)
        },
        cancel() {
          pulled.cancelled = true
        },
      })
      return { body, pulled }
    }
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024))

    it(`reads no more than ${MAX_ANSWER_BYTES} bytes of an answer, then stops reading: answer_too_large`, async () => {
      const service = await start()
      for (const status of [200, 502]) {
        const { body, pulled } = endless(chunk)
        const answering: Fetch = (url, init) =>
          url.includes(CUSTOMERS_PATH)
            ? Promise.resolve(new Response(body, { status, headers: { 'content-type': 'text/html' } }))
            : fetch(url, init)
        const error = await failure(client(service, { fetch: answering }).customers.query({ mobile: '1' }))
        expect(error).toMatchObject({ code: 'answer_too_large', status, path: CUSTOMERS_PATH, body: undefined })
        expect(pulled.cancelled).toBe(true)
        expect(pulled.bytes).toBeLessThanOrEqual(MAX_ANSWER_BYTES + 2 * chunk.byteLength)
      }
    })

    it('refuses an answer whose Content-Length is over the limit before reading it, and a token answer over 64 KiB', async () => {
      const service = await start()
      const { body, pulled } = endless(chunk)
      const declared: Fetch = (url, init) =>
        url.includes(CUSTOMERS_PATH)
          ? Promise.resolve(new Response(body, { headers: { 'content-length': String(MAX_ANSWER_BYTES + 1) } }))
          : fetch(url, init)
      expect(await failure(client(service, { fetch: declared }).customers.query({ mobile: '1' }))).toMatchObject({
        code: 'answer_too_large',
      })
      expect(pulled.bytes).toBeLessThanOrEqual(chunk.byteLength)
      const padded: Fetch = async () => jsonResponse(200, { access_token: 'tok-1', expires_in: 7200, padding: 'x'.repeat(64 * 1024) })
      expect(await failure(client(service, { fetch: padded }).token())).toMatchObject({ code: 'answer_too_large', path: TOKEN_PATH })
    })

    it('gives an ApiError, its body redacted, for an error answer nested a hundred thousand deep', async () => {
      const service = await start()
      const depth = 100_000
      const nested = `{"error":"too_deep","detail":${'['.repeat(depth)}"${APP_SECRET}"${']'.repeat(depth)}}`
      const answering: Fetch = (url, init) =>
        url.includes(CUSTOMERS_PATH)
          ? Promise.resolve(new Response(nested, { status: 500, headers: { 'content-type': 'application/json' } }))
          : fetch(url, init)
      const error = await failure(client(service, { fetch: answering }).customers.query({ mobile: '1' }))
      expect(error).toMatchObject({ code: 'too_deep', status: 500 })
      let innermost: unknown = (error.body as { detail: unknown }).detail
      for (let level = 0; level < depth; level++) innermost = (innermost as unknown[])[0]
      expect(innermost).toBe('[redacted]')
    })

    it('refuses a token that cannot go into a header, and never quotes it', async () => {
      const service = await start()
      const token = 'tok-secret-5678'
      for (const bad of [`${token}\r\nX-Injected: 1`, `${token}\u0000`, `${token} x`]) {
        const answering: Fetch = async () => jsonResponse(200, { access_token: bad, expires_in: 7200 })
        const error = await failure(client(service, { fetch: answering }).customers.query({ mobile: '1' }))
        expect(error).toMatchObject({ code: 'invalid_token_response', path: TOKEN_PATH })
        expect(everything(error)).not.toContain(token)
      }
    })
  })

  describe('when the token endpoint never answers', () => {
    afterEach(() => {
      vi.useRealTimers()
    })
    /** A token endpoint that takes the request and never answers, as fetch does: until its signal aborts. */
    const stalled: Fetch = (url, init) =>
      url.includes(TOKEN_PATH)
        ? new Promise((_, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)))
        : fetch(url, init)

    it("lets each caller's signal end its own wait, with the signal's reason", async () => {
      const service = await start()
      const api = client(service, { fetch: stalled })
      const first = new AbortController()
      const waiting = api.customers.query({ mobile: '1' }, { signal: first.signal }).catch((e: unknown) => e)
      first.abort()
      const error = await waiting
      expect(error).not.toBeInstanceOf(ApiError)
      expect((error as Error).name).toBe('AbortError')
    })

    it(`fails every call waiting on it with network_error after ${TOKEN_REQUEST_MS / 1000} s`, async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
      const service = await start()
      const api = client(service, { fetch: stalled })
      const calls = [api.customers.query({ mobile: '1' }), api.token()].map((call) => call.catch((e: unknown) => e))
      await vi.advanceTimersByTimeAsync(TOKEN_REQUEST_MS)
      for (const error of await Promise.all(calls)) {
        expect(error).toBeInstanceOf(ApiError)
        expect(error).toMatchObject({ code: 'network_error', status: 0, path: TOKEN_PATH })
        expect((error as ApiError).cause).toEqual(new Error(`no answer to the token request within ${TOKEN_REQUEST_MS} ms`))
      }
    })
  })
})
