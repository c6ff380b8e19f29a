import { describe, expect, it } from 'vitest'
import { factories, type Received } from '../support/apps.ts'
import type { Outgoing } from '../support/http.ts'
import { contentLength } from './cases.ts'

// The Content-Length rows that only an app served in process can receive: on a socket, Node's own
// parser answers them first (connections.test.ts pins that answer for every adapter).

const inProcess = factories.filter((factory) => factory.name === 'Hono (app.request)')

describe.each(inProcess)('$name', (factory) => {
  describe(contentLength.name, () => {
    it.each(contentLength.cases.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
      const app = await factory.start(row.options())
      const sent: Outgoing[] = []
      try {
        const reply = await row.send({
          send: (outgoing) => {
            sent.push(outgoing)
            return app.send(outgoing)
          },
          close: app.close,
        })
        const expected = row.expect
        expect(reply.status, reply.text.slice(0, 300)).toBe(expected.status)
        if (expected.error !== undefined) {
          expect(JSON.parse(reply.text)).toEqual({ error: expected.error, message: expect.any(String) })
          expect(reply.headers['cache-control']).toBe('no-store')
          expect(app.handled(), 'the handler never ran').toBe(0)
        }
        if (expected.payload !== undefined) {
          expect(app.handled(), 'the handler ran once').toBe(1)
          expect((JSON.parse(reply.text) as Received).payload).toEqual(expected.payload)
          expect((JSON.parse(reply.text) as Received).rawText).toBe(expected.raw)
        }
        if (expected.stoppedReading) expect(reply.streamedAll, 'answered before the whole body was sent').toBe(false)
      } finally {
        await app.close()
      }
    })
  })
})
