import type { WebhookOptions } from '@hookguard/core'
import { sensitive } from '@hookguard/testkit/fetch'
import type { Outgoing, Reply } from '@hookguard/testkit/http'
import { expect } from 'vitest'
import type { App, AppFactory, Received } from '../support/apps.ts'
import { type Case, type Expected, SECRETS } from './cases.ts'

/** What a row of the conformance table must see: the status, headers, payload or refusal it names, and nothing sensitive. */
export function check(reply: Reply, expected: Expected, seen: { mode: string; handled: number; sent: Outgoing[] }): void {
  expect(reply.status, reply.text.slice(0, 300)).toBe(expected.status)
  for (const [name, value] of Object.entries(expected.headers ?? {})) {
    expect(reply.headers[name], name).toBe(value)
  }

  if (expected.payload !== undefined) {
    expect(seen.handled, 'times the handler ran').toBe(expected.handled ?? 1)
    const received = JSON.parse(reply.text) as Received
    expect(received.mode).toBe(seen.mode)
    expect(received.payload).toEqual(expected.payload)
    if (expected.raw !== undefined) {
      expect(received.rawText).toBe(expected.raw)
      expect(received.rawLength).toBe(Buffer.byteLength(expected.raw))
    }
  } else {
    expect(seen.handled, 'times the handler ran').toBe(expected.handled ?? 0)
  }

  if (expected.error !== undefined) {
    // Only a schema's refusal says more: where the payload failed.
    const paths = expected.error === 'invalid_payload' ? { paths: expect.any(Array) } : {}
    expect(JSON.parse(reply.text)).toEqual({ error: expected.error, message: expect.any(String), ...paths })
    expect(reply.headers['content-type']).toMatch(/^application\/json/)
    expect(reply.headers['cache-control']).toBe('no-store')
    // One assertion over every finding: an expect() per secret was a large share of the CPU.
    const leaked = sensitive(seen.sent, SECRETS).filter((secret) => reply.text.includes(secret))
    expect(leaked, 'secrets, credentials or bodies in the answer').toEqual([])
  }

  if (expected.json !== undefined) {
    expect(JSON.parse(reply.text)).toMatchObject(expected.json)
  }

  if (expected.drained) {
    expect(reply.streamedAll, 'the whole body was sent before the answer').toBe(true)
  }
}

/**
 * Starts an app for one row (or takes one from `start`, such as a shared app), runs the row against
 * it and checks its answer, and closes the app.
 */
export async function runRow(
  row: Case,
  factory: AppFactory,
  start: (factory: AppFactory, options: WebhookOptions) => Promise<App> = (f, o) => f.start(o),
): Promise<void> {
  const options = row.options()
  const app = await start(factory, options)
  const sent: Outgoing[] = []
  try {
    const reply = await row.send({
      send: (outgoing) => {
        // Kept for the leak check: nothing the row sent may come back in a refusal.
        sent.push(outgoing)
        return app.send(outgoing)
      },
      close: app.close,
    })
    check(reply, row.expect, { mode: options.auth.mode, handled: app.handled(), sent })
  } finally {
    await app.close()
  }
}
