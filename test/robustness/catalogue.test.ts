import type { Reply } from '@hookguard/testkit/http'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { factories } from '../support/apps.ts'
import { fromNow, sharedApps } from '../support/shared-apps.ts'
import { catalogue, clock, expectationFor, START, type Wire } from './catalogue.ts'
import { checkReply, healthyRequest, recordingWire, sensitiveFrom, settle } from './support/checks.ts'
import { startServed } from './support/listening.ts'
import { captureOutput, expectNothingLeaked, failOnProcessFaults } from './support/watch.ts'

// The catalogue of malformed and hostile requests against every adapter, answering as it ships
// (onError 'respond'): the contract's answer or Node's own, nothing sensitive in the answer or in
// any log line, no fault reaching the process, and the next delivery still served.

failOnProcessFaults()
beforeEach(() => {
  clock.now = START
})

describe.each(factories)('$name', (factory) => {
  // Each row then checks that the next delivery is still served: the app it leaves is the next row's.
  const apps = sharedApps(startServed, fromNow)
  afterAll(() => apps.closeAll())
  for (const section of catalogue) {
    // A cell that cannot exist in process says why in the table (row.inProcess); the test at the
    // end holds each such reason to account.
    const cells = section.rows.flatMap((row) => {
      const expected = expectationFor(row, factory.inProcess === true)
      return 'notApplicable' in expected ? [] : [{ row, expected }]
    })
    if (cells.length === 0) continue
    describe(section.name, () => {
      for (const { row, expected } of cells) {
        it(row.name, { timeout: row.timeoutMs }, async () => {
          const options = row.options()
          const app = await apps.take(factory, options)
          const { wire, sent, sensitive } = recordingWire(app, 'hookguard')
          try {
            const output = captureOutput()
            let reply: Reply
            try {
              reply = await row.send(wire)
              await settle()
            } finally {
              output.restore()
            }
            checkReply(reply, expected, app.handled())
            sensitive.push(...(await sensitiveFrom(sent, options)))
            // A delivery's answer is the handler's echo of the body; a refusal's must hold none of it.
            const places: Record<string, string> = { log: output.text() }
            if (expected.payload === undefined)
              Object.assign(places, { answer: reply.text, 'answer headers': JSON.stringify(reply.headers) })
            expectNothingLeaked(places, sensitive)

            const next = await healthyRequest(app, options)
            expect(next.status, `the next delivery: ${next.text.slice(0, 200)}`).toBe(200)
          } finally {
            await app.close()
          }
        })
      }
    })
  }
})

describe('the cells left out in process', () => {
  const honoInProcess = factories.find((factory) => factory.name === 'Hono (app.request)')
  const notApplicable = catalogue
    .flatMap((section) => section.rows)
    .filter((row) => 'notApplicable' in (expectationFor(row, true) as object))

  it.each(notApplicable.map((row) => [row.name, row] as const))('need a socket: %s', async (_name, row) => {
    if (honoInProcess === undefined) throw new Error('no in-process factory')
    const app = await honoInProcess.start(row.options())
    try {
      const wire: Wire = { port: undefined, send: app.send, sensitive: () => {}, refusals: 'hookguard' }
      await expect(Promise.resolve().then(() => row.send(wire))).rejects.toThrow('needs a socket')
    } finally {
      await app.close()
    }
  })
})
