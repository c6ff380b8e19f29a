import type { WebhookOptions } from '@hookguard/core'
import type { Reply, Target } from '@hookguard/testkit/http'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import * as conformance from '../conformance/cases.ts'
import { factories } from '../support/apps.ts'
import { fromNow, sharedApps } from '../support/shared-apps.ts'
import { catalogue, clock, type Expected, expectationFor, START, type Wire } from './catalogue.ts'
import { codeOf, recordingWire, sensitiveFrom, settle } from './support/checks.ts'
import { type PassingApp, startPassing } from './support/listening.ts'
import { captureOutput, describeError, expectNothingLeaked, failOnProcessFaults, until } from './support/watch.ts'

// Every refusal handed to the framework's own error handling (Express onError 'next', Koa and
// Hono onError 'throw'), left as it ships: Express's final handler logging each error's stack and
// showing it in the answer (env 'development'), Koa's app.onerror with silent off, Hono's default
// onError. Neither the error passed on (message, stack, own properties, cause), nor the answer,
// nor any console or stdout/stderr line may hold a secret, password, token, or the body.

failOnProcessFaults()
beforeEach(() => {
  clock.now = START
  conformance.clock.now = conformance.START
})

interface Run {
  reply: Reply
  app: PassingApp
  sensitive: string[]
  log: string
}

/** Runs one exchange against a passing-on app, with its output captured and its secrets collected. */
async function run(
  app: PassingApp,
  options: WebhookOptions,
  send: (wire: Wire) => Promise<Reply>,
  refusal: string | undefined,
): Promise<Run> {
  const { wire, sent, sensitive } = recordingWire(app, 'framework')
  const output = captureOutput()
  let reply: Reply
  try {
    reply = await send(wire)
    // Where the client left or Node answered first, the app's conclusion comes after the reply.
    if (refusal !== undefined) await until(() => app.passedOn().length > 0)
    await settle()
  } finally {
    output.restore()
  }
  sensitive.push(...(await sensitiveFrom(sent, options)))
  return { reply, app, sensitive, log: output.text() }
}

function expectNoLeak({ reply, app, sensitive, log }: Run, delivered: boolean): void {
  // Events go to logs and metrics as they are: they may hold none of it either.
  const places: Record<string, string> = { log, events: JSON.stringify(app.events()) }
  // A delivery's answer is the handler's echo of the body; a refusal's must hold none of it.
  if (!delivered) Object.assign(places, { answer: reply.text, 'answer headers': JSON.stringify(reply.headers) })
  app.passedOn().forEach((error, i) => {
    places[`error passed on #${i + 1}`] = describeError(error)
  })
  expectNothingLeaked(places, sensitive)
}

describe.each(factories)('$name, refusals handed to the framework', (factory) => {
  const apps = sharedApps(startPassing, passingFromNow)
  afterAll(() => apps.closeAll())

  describe('the catalogue of malformed requests', () => {
    for (const section of catalogue) {
      const cells = section.rows.flatMap((row) => {
        const expected = expectationFor(row, factory.inProcess === true)
        // Deliveries have nothing to pass on; what they log is checked in catalogue.test.ts.
        return 'notApplicable' in expected || expected.payload !== undefined ? [] : [{ row, expected }]
      })
      if (cells.length === 0) continue
      describe(section.name, () => {
        for (const { row, expected } of cells) {
          it(`${row.name}: passes on ${refusalOf(expected) ?? 'nothing'}, and leaks nothing`, { timeout: row.timeoutMs }, async () => {
            const options = row.options()
            const app = await apps.take(factory, options)
            try {
              const result = await run(app, options, row.send, refusalOf(expected))
              const exception = FRAMEWORK_ANSWERS.find((e) => e.factories.includes(factory.name) && e.refusal === refusalOf(expected))
              if (exception === undefined) expect(result.reply.status, result.reply.text.slice(0, 200)).toBe(expected.status)
              else expect([expected.status, 0], exception.because).toContain(result.reply.status)
              expect(app.passedOn().map(codeOf)).toEqual(refusalOf(expected) === undefined ? [] : [refusalOf(expected)])
              expect(app.handled(), 'the handler never ran').toBe(0)
              expectNoLeak(result, false)
            } finally {
              await app.close()
            }
          })
        }
      })
    }
  })

  describe('the conformance cases that refuse', () => {
    for (const group of conformance.groups) {
      const refusals = group.cases.filter((row) => row.expect.status >= 400)
      describe(group.name, () => {
        for (const row of refusals) {
          // The token address answers itself; the message address hands its refusal on.
          const passedOn = isTokenAddress(row) ? undefined : row.expect.error
          it(`${row.name}: ${passedOn === undefined ? 'answers' : `passes on ${passedOn}`}, and leaks nothing`, async () => {
            const options = row.options()
            const app = await apps.take(factory, options)
            try {
              const target: Target = { send: app.send, close: app.close }
              const result = await run(app, options, (wire) => row.send({ send: wire.send, close: target.close }), passedOn)
              expect(result.reply.status).toBe(row.expect.status)
              const codes = app.passedOn().map(codeOf)
              // A resolver that throws is the app's own error (500), passed on as it was thrown.
              if (row.expect.status === 500) expect(codes).toEqual([undefined])
              else expect(codes).toEqual(passedOn === undefined ? [] : [passedOn])
              // Every refusal of hookguard's own is an event, with the code it answered.
              const told = app.events().map((event) => ('code' in event ? event.code : event.type))
              if (row.expect.error !== undefined && row.expect.status !== 500) expect(told).toContain(row.expect.error)
              expectNoLeak(result, false)
            } finally {
              await app.close()
            }
          })
        }
      })
    }
  })
})

/** A test's view of a shared app: the handler runs, errors passed on and events from now on. */
function passingFromNow(app: PassingApp): PassingApp {
  const passedOn = app.passedOn().length
  const events = app.events().length
  return { ...fromNow(app), passedOn: () => app.passedOn().slice(passedOn), events: () => app.events().slice(events) }
}

/**
 * Where a framework's own error handler answers a passed-on refusal otherwise than hookguard
 * would, and why. hookguard has stopped reading by then; the framework chooses to read on.
 */
const FRAMEWORK_ANSWERS = [
  {
    factories: ['Express 4', 'Express 5'],
    refusal: 'payload_too_large',
    because:
      "Express's final handler reads the rest of the body (discarding it) before it answers: a client that withholds a declared body gets no answer at all",
  },
]

/** The code hookguard refuses with: the one it answers, or, where no answer can arrive, the one it concludes. */
function refusalOf(expected: Expected): string | undefined {
  return expected.error ?? expected.concludes
}

function isTokenAddress(row: conformance.Case): boolean {
  return ['invalid_request', 'unsupported_grant_type', 'invalid_client', 'method_not_allowed'].includes(row.expect.error ?? '')
}
