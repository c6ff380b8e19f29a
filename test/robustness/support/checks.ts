import { ERROR_STATUS, sign, type WebhookOptions } from '@hookguard/core'
import { formatBasicAuthorization } from '@hookguard/core/adapter'
import type { Outgoing, Reply, Target } from '@hookguard/testkit/http'
import { expect } from 'vitest'
import { SECRETS } from '../../conformance/cases.ts'
import type { Received } from '../../support/apps.ts'
import { type Expected, ROBUST_SECRETS, type Wire } from '../catalogue.ts'
import type { Served } from './listening.ts'

const decoder = new TextDecoder()

/** Checks an answer against a row's expectation; `handled` is how often the handler after webhook() ran. */
export function checkReply(reply: Reply, expected: Expected, handled: number): void {
  expect(reply.status, reply.text.slice(0, 300)).toBe(expected.status)
  for (const [name, value] of Object.entries(expected.headers ?? {})) expect(reply.headers[name], name).toBe(value)
  if (expected.payload !== undefined) {
    expect(handled, 'the handler ran once').toBe(1)
    expect((JSON.parse(reply.text) as Received).payload).toEqual(expected.payload)
  } else {
    expect(handled, 'the handler never ran').toBe(0)
  }
  if (expected.error !== undefined) {
    expect(JSON.parse(reply.text)).toEqual({ error: expected.error, message: expect.any(String) })
    expect(reply.headers['cache-control']).toBe('no-store')
  }
  if (expected.byNode) expect(reply.text, "the server's own answer, not hookguard's").toMatch(SERVERS_OWN_ANSWER)
}

/**
 * The body of a server's own answer to a request Node's HTTP parser refused: Node's has none;
 * Fastify's `clientErrorHandler` writes its own JSON (`{"error":"Bad Request","message":"Client
 * Error","statusCode":400}`), never hookguard's `{ error: code, message }`.
 */
const SERVERS_OWN_ANSWER = /^(?:|\{"error":"[A-Za-z ]+","message":"[A-Za-z ]+","statusCode":\d{3}\})$/

/**
 * A wire to `app` that keeps what went through it: `sent`, for `sensitiveFrom` afterwards, and
 * `sensitive`, every configured secret plus what the row declared outside `send`.
 */
export function recordingWire(app: Served, refusals: Wire['refusals']): { wire: Wire; sent: Outgoing[]; sensitive: string[] } {
  const sent: Outgoing[] = []
  const sensitive = [...SECRETS, ...ROBUST_SECRETS]
  const wire: Wire = {
    port: app.port,
    send: (outgoing) => {
      sent.push(outgoing)
      return app.send(outgoing)
    },
    sensitive: (...values) => sensitive.push(...values),
    refusals,
  }
  return { wire, sent, sensitive }
}

/**
 * The values a sender gave away with these requests, which no answer, error or log may repeat:
 * each body, token, client secret and Basic credential, and for mode secret the signature the
 * body should have had (an answer that told it would be a signing oracle).
 */
export async function sensitiveFrom(sent: readonly Outgoing[], options: WebhookOptions): Promise<string[]> {
  const found: string[] = []
  const secrets = staticSecrets(options)
  for (const { path, headers = {}, body } of sent) {
    const text = typeof body === 'string' ? body : body === undefined ? '' : decoder.decode(body)
    found.push(text)
    // A body with no '=' has no field with a value: not parsed, as the megabyte bodies are not.
    const form = text.includes('=') ? [new URLSearchParams(text)] : []
    for (const fields of [new URL(path, 'http://localhost').searchParams, ...form]) {
      for (const name of ['access_token', 'secret']) found.push(fields.get(name) ?? '')
    }
    for (const [name, value] of Object.entries(headers)) {
      if (name.toLowerCase() === 'authorization') found.push(value.slice(value.indexOf(' ') + 1))
    }
    if (body !== undefined) for (const secret of secrets) found.push(await sign(body, secret))
  }
  return found
}

function staticSecrets({ auth }: WebhookOptions): string[] {
  if (auth.mode !== 'secret' || typeof auth.secret === 'function') return []
  return typeof auth.secret === 'string' ? [auth.secret] : [...auth.secret]
}

/** A delivery the app must accept: after a hostile request, it still serves the next one. */
export async function healthyRequest(app: Target, options: WebhookOptions): Promise<Reply> {
  const body = '{"event":"ping"}'
  const post = (headers: Record<string, string>, path = '/hooks') =>
    app.send({ method: 'POST', path, headers: { 'content-type': 'application/json', ...headers }, body })
  const { auth } = options
  switch (auth.mode) {
    case 'secret': {
      const [secret] = staticSecrets(options)
      if (secret === undefined) throw new Error('healthyRequest needs a static secret')
      return post({ 'x-service-hmac-signature': await sign(body, secret) })
    }
    case 'basic':
      if (!('username' in auth)) throw new Error('healthyRequest needs static Basic credentials')
      return post({ authorization: formatBasicAuthorization(auth.username, auth.password) })
    case 'oauth2': {
      const query = new URLSearchParams({ appid: auth.appId, secret: auth.secret, grant_type: 'client_credentials' })
      const answer = await app.send({ method: 'GET', path: `/token?${query}` })
      const { access_token } = JSON.parse(answer.text) as { access_token: string }
      return post({}, `/hooks?access_token=${encodeURIComponent(access_token)}`)
    }
    case 'none':
      return post({})
  }
}

/** The `WebhookError` code an adapter passed on: the error itself (Express, Koa) or its cause (Hono's HTTPException). */
export function codeOf(error: unknown): string | undefined {
  const { code, cause } = (error ?? {}) as { code?: unknown; cause?: { code?: unknown } }
  for (const candidate of [code, cause?.code]) if (typeof candidate === 'string' && candidate in ERROR_STATUS) return candidate
  return undefined
}

/**
 * Lets work queued for later turns finish: a turn of the timers, then of the immediates, which run
 * after any queued before them. The frameworks defer their logging no further: Express's final
 * handler logs from a setImmediate queued before its answer (or, for a sender that left, when it
 * passes the error on, which the caller has waited for), Koa and Hono log as they answer.
 */
export async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 0))
  await new Promise((resolve) => setImmediate(resolve))
}
