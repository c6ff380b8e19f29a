import { inspect } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ApiError, type Fetch } from '../src/index.ts'
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
})
