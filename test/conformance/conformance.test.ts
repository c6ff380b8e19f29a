import { beforeEach, describe, expect, it } from 'vitest'
import { factories, type Received } from '../support/apps.ts'
import { sensitive } from '../support/fetch.ts'
import type { Outgoing, Reply } from '../support/http.ts'
import { clock, type Expected, groups, SECRETS, START } from './cases.ts'

// One table of cases, run against an app built with each adapter and framework version: every
// adapter must answer the contract's tables identically.

beforeEach(() => {
  clock.now = START
})

describe.each(factories)('$name', (factory) => {
  for (const group of groups) {
    describe(group.name, () => {
      for (const row of group.cases) {
        it(row.name, async () => {
          const options = row.options()
          const app = await factory.start(options)
          const sent: Outgoing[] = []
          try {
            const reply = await row.send({
              send: (outgoing) => {
                sent.push(outgoing)
                return app.send(outgoing)
              },
              close: app.close,
            })
            check(reply, row.expect, { mode: options.auth.mode, handled: app.handled(), sent })
          } finally {
            await app.close()
          }
        })
      }
    })
  }
})

function check(reply: Reply, expected: Expected, seen: { mode: string; handled: number; sent: Outgoing[] }): void {
  expect(reply.status, reply.text.slice(0, 300)).toBe(expected.status)
  for (const [name, value] of Object.entries(expected.headers ?? {})) {
    expect(reply.headers[name], name).toBe(value)
  }

  if (expected.payload !== undefined) {
    expect(seen.handled, 'the handler ran once').toBe(1)
    const received = JSON.parse(reply.text) as Received
    expect(received.mode).toBe(seen.mode)
    expect(received.payload).toEqual(expected.payload)
    if (expected.raw !== undefined) {
      expect(received.rawText).toBe(expected.raw)
      expect(received.rawLength).toBe(Buffer.byteLength(expected.raw))
    }
  } else {
    expect(seen.handled, 'the handler never ran').toBe(0)
  }

  if (expected.error !== undefined) {
    expect(JSON.parse(reply.text)).toEqual({ error: expected.error, message: expect.any(String) })
    expect(reply.headers['content-type']).toMatch(/^application\/json/)
    expect(reply.headers['cache-control']).toBe('no-store')
    for (const secret of sensitive(seen.sent, SECRETS)) expect(reply.text).not.toContain(secret)
  }

  if (expected.json !== undefined) {
    expect(JSON.parse(reply.text)).toMatchObject(expected.json)
  }

  if (expected.stoppedReading) {
    expect(reply.streamedAll, 'answered before the whole body was sent').toBe(false)
  }
}
