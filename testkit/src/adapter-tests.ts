import type { RequestListener } from 'node:http'
import { afterEach, expect, it } from 'vitest'
import { listen, type Outgoing, type Target } from './http.ts'
import fixtures from './signatures.json' with { type: 'json' }

// What an adapter's own tests start from. Kept apart from http.ts, which the runtime matrix loads
// outside vitest.

/** The service's own signed delivery, which every adapter must accept as it is. */
export const vector = fixtures.vectors[0] as (typeof fixtures.vectors)[number]
export const auth = { mode: 'secret', secret: vector.secret } as const
export const signed: Outgoing = {
  path: '/hooks',
  headers: { 'content-type': 'application/json', 'x-service-hmac-signature': vector.signature },
  body: vector.body,
}
/** What an echoing handler answers for `signed`. */
export const delivered = { payload: JSON.parse(vector.body), raw: vector.body }

/**
 * Registers an afterEach that closes the server a test started, and returns how to start it, so
 * that a failing test never leaves a port open for the next one.
 */
export function serverPerTest(): (listener: RequestListener) => Promise<Target> {
  let open: Target | undefined
  afterEach(async () => {
    await open?.close()
    open = undefined
  })
  return async (listener) => {
    open = await listen(listener)
    return open
  }
}

/**
 * The tests of what a per-tenant resolver reads of the request's origin (`req.url.origin`) through
 * a Node adapter: the `Host` the request was sent to, and `X-Forwarded-Host` and `-Proto` only when
 * the app trusts its proxy (`trustSetting` names how, for the titles). `answer` serves `signed`,
 * with `headers` added, on an app whose proxy trust is `trusted` and whose secret is `secret`, and
 * checks that it was accepted.
 */
export function itReadsTheOrigin(
  trustSetting: string,
  answer: (trusted: boolean, headers: Record<string, string>, secret: (req: { url: URL }) => string) => Promise<void>,
): void {
  const forwarded = { host: 'acme.example.com:8443', 'x-forwarded-host': 'globex.example.com', 'x-forwarded-proto': 'https' }
  const originSeen = async (trusted: boolean, headers: Record<string, string>) => {
    const seen: string[] = []
    await answer(trusted, headers, (req) => {
      seen.push(req.url.origin)
      return vector.secret
    })
    return seen
  }

  it('is the Host the request was sent to, port included', async () => {
    expect(await originSeen(false, { host: 'acme.example.com:8443' })).toEqual(['http://acme.example.com:8443'])
  })

  it(`ignores X-Forwarded-* unless ${trustSetting} trusts the proxy`, async () => {
    expect(await originSeen(false, forwarded)).toEqual(['http://acme.example.com:8443'])
    expect(await originSeen(true, forwarded)).toEqual(['https://globex.example.com'])
  })

  it('falls back to the path alone for a Host header that names no host', async () => {
    expect(await originSeen(false, { host: 'not a host' })).toEqual(['http://localhost'])
  })
}
