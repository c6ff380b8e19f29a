import type { RequestListener } from 'node:http'
import { afterEach } from 'vitest'
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
