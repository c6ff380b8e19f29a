import {
  BODY_IDLE_MS,
  BODY_MAX_MS,
  DRAIN_IDLE_MS,
  DRAIN_MAX_BYTES,
  type HandoffJob,
  type HandoffQueue,
  sign,
  type WebhookOptions,
} from '@hookguard/core'
import { formatBasicAuthorization } from '@hookguard/core/adapter'
import type { Reply } from '@hookguard/testkit/http'
import {
  type Aftermath,
  aftermath,
  announcesClose,
  type Connection,
  chunked,
  connect,
  describeRounds,
  head,
  writeFirstRounds,
} from '@hookguard/testkit/wire'
import { describe, expect, it, type OnTestFinishedHandler } from 'vitest'
import { type Served, startServed } from '../robustness/support/listening.ts'
import { watchProcessFaults } from '../robustness/support/watch.ts'
import { type AppFactory, factories, type Received } from '../support/apps.ts'

// The contract's rule for connections, on the wire of every adapter that listens on a socket: after
// refusing a body it has not read in full, a receiver either reads the rest (within a bound) and
// keeps the connection, so that the sender's next delivery on it is answered, or says
// `Connection: close` and closes it. Each test speaks raw HTTP/1.1 over one connection, because
// Node's own client would hide the difference by opening another.

const KIB = 1024
const MIB = 1024 * KIB
const LIMIT = KIB
const SECRET = 'whsec-connections-2f9a41'
const BASIC = { username: 'hook-user', password: 'correct horse' }
const SIGNATURE = 'X-Service-Hmac-Signature'
const EVENT = '{"event":"customer.created","tenant":"acme","data":{"id":884211}}'
/** A test waits at most this long for an answer or a close (a stall fails it, it never hangs). */
const TEST_TIMEOUT = 10_000

const none = (): WebhookOptions => ({ auth: { mode: 'none' }, maxBodySize: LIMIT })
const secret = (): WebhookOptions => ({ auth: { mode: 'secret', secret: SECRET }, maxBodySize: LIMIT })
const basic = (): WebhookOptions => ({ auth: { mode: 'basic', ...BASIC }, maxBodySize: LIMIT })

type Lines = [string, string][]
const JSON_TYPE: Lines = [['Content-Type', 'application/json']]

/** What `mode` needs on a request for `body` to be delivered. */
async function credentials(options: WebhookOptions, body: string): Promise<Lines> {
  switch (options.auth.mode) {
    case 'secret':
      return [[SIGNATURE, await sign(body, SECRET)]]
    case 'basic':
      return [['Authorization', formatBasicAuthorization(BASIC.username, BASIC.password)]]
    default:
      return []
  }
}

/** A delivery the app must accept, as the next request on a connection. */
async function delivery(options: WebhookOptions): Promise<string> {
  return `${head('POST', '/hooks', [...JSON_TYPE, ...(await credentials(options, EVENT)), ['Content-Length', String(EVENT.length)]])}${EVENT}`
}

/** `size` bytes of a JSON string that has not ended yet: a body still being sent. */
const bodyStart = (size: number) => `"${'x'.repeat(size - 1)}`

/**
 * The server's own answer to a request Node's HTTP parser refused, where it is not Node's (no body,
 * `Connection: close`): Fastify's `clientErrorHandler` writes a JSON body and closes the connection
 * without announcing it. Either way the sender learns the connection is gone.
 */
const PARSER_REFUSALS: Record<string, { text: string; announcesClose: boolean }> = {
  'Fastify 5': { text: '{"error":"Bad Request","message":"Client Error","statusCode":400}', announcesClose: false },
}
const NODE_REFUSAL = { text: '', announcesClose: true }

const serverFactories = factories.filter((factory) => factory.inProcess !== true)

/** A test's `onTestFinished`: what it starts is closed after it, also when tests run side by side. */
type Finally = (fn: OnTestFinishedHandler) => void

/** Starts `factory`'s app and opens one connection to it; both are closed after the test. */
async function connected(
  onTestFinished: Finally,
  factory: AppFactory,
  options: WebhookOptions,
): Promise<{ app: Served; connection: Connection }> {
  const app = await served(onTestFinished, factory, options)
  if (app.port === undefined) throw new Error(`${factory.name} does not listen on a port`)
  const connection = await connect(app.port)
  onTestFinished(() => connection.destroy())
  return { app, connection }
}

/** Starts `factory`'s app, closed after the test. */
async function served(onTestFinished: Finally, factory: AppFactory, options: WebhookOptions): Promise<Served> {
  const app = await startServed(factory, options)
  onTestFinished(() => app.close())
  return app
}

/** Reads the answer to the first request, failing the test if none arrives in time (`ms`, by default the wire's wait). */
async function firstAnswer(connection: Connection, ms?: number): Promise<Reply> {
  const reply = await connection.reply(ms)
  if (reply === undefined) {
    const closed = await connection.closed(0)
    throw new Error(closed ? 'the server closed the connection without answering' : 'no answer arrived (a stall)')
  }
  return reply
}

/** The connection was kept, without `Connection: close`, and carried the next delivery, answered 200. */
function expectKept(after: Aftermath): void {
  expect(after, 'what became of the connection').toMatchObject({ outcome: 'kept' })
  if (after.outcome !== 'kept') return
  expect(after.next.status, after.next.text.slice(0, 300)).toBe(200)
  expect((JSON.parse(after.next.text) as Received).payload).toEqual(JSON.parse(EVENT))
}

function expectRefusal(reply: Reply, status: number, error: string): void {
  expect(reply.status, reply.text.slice(0, 300)).toBe(status)
  expect(JSON.parse(reply.text)).toEqual({ error, message: expect.any(String) })
  expect(reply.headers['cache-control']).toBe('no-store')
}

describe.each(serverFactories)('$name', (factory) => {
  describe('after a chunked body that grows past maxBodySize', () => {
    // Past what Node buffers for a request nobody reads: a server that stops reading there can
    // never reach the next request on the connection.
    const large = { chunks: 256, size: KIB }
    it.for([
      { mode: 'none', options: none, chunks: 8, size: 256, why: '2 KiB sent in full, last chunk and all' },
      { mode: 'none', options: none, ...large, why: '256 KiB sent in full, last chunk and all' },
      { mode: 'secret', options: secret, ...large, why: '256 KiB sent in full, signed as the empty body' },
    ])(
      "answers 413 payload_too_large once it has drained the body, and then the next delivery on the same connection (mode '$mode', $why)",
      { timeout: TEST_TIMEOUT },
      async ({ options, chunks, size }, { onTestFinished }) => {
        const { app, connection } = await connected(onTestFinished, factory, options())
        const lines: Lines = [...JSON_TYPE, ...(await credentials(options(), '')), ['Transfer-Encoding', 'chunked']]
        await connection.write(head('POST', '/hooks', lines), chunked(Array(chunks).fill(bodyStart(size))))
        const reply = await firstAnswer(connection)
        expectRefusal(reply, 413, 'payload_too_large')
        expectKept(await aftermath(connection, reply, [await delivery(options())]))
        expect(app.handled()).toBe(1)
      },
    )
  })

  describe('after a declared Content-Length over maxBodySize', () => {
    it(
      'answers 413 payload_too_large once it has drained the body, and then the next delivery on the same connection (256 KiB sent in full)',
      async ({ onTestFinished }) => {
        const { app, connection } = await connected(onTestFinished, factory, none())
        await connection.write(head('POST', '/hooks', [...JSON_TYPE, ['Content-Length', String(256 * KIB)]]), bodyStart(256 * KIB))
        const reply = await firstAnswer(connection)
        expectRefusal(reply, 413, 'payload_too_large')
        expectKept(await aftermath(connection, reply, [await delivery(none())]))
        expect(app.handled()).toBe(1)
      },
      TEST_TIMEOUT,
    )
  })

  describe('after a 401 for a body within maxBodySize', () => {
    const refusals = [
      {
        refusal: "mode 'basic', a wrong password",
        options: basic,
        lines: (): Lines => [['Authorization', formatBasicAuthorization(BASIC.username, 'wrong horse')]],
        error: 'invalid_credentials',
      },
      { refusal: "mode 'secret', no signature header", options: secret, lines: (): Lines => [], error: 'missing_signature' },
      {
        refusal: "mode 'secret', a wrong signature (read after the body)",
        options: secret,
        lines: (): Lines => [[SIGNATURE, '0'.repeat(64)]],
        error: 'invalid_signature',
      },
    ]
    const framings = [
      {
        framing: 'declared with Content-Length',
        frame: (body: string): [Lines, string] => [[['Content-Length', String(body.length)]], body],
      },
      {
        framing: 'chunked',
        frame: (body: string): [Lines, Buffer] => [[['Transfer-Encoding', 'chunked']], chunked([body.slice(0, 20), body.slice(20)])],
      },
    ]
    const cells = refusals.flatMap((refusal) => framings.map((framing) => ({ ...refusal, ...framing })))

    it.for(cells)(
      'answers 401 $error and then the next delivery on the same connection ($refusal, $framing)',
      { timeout: TEST_TIMEOUT },
      async ({ options, lines, error, frame }, { onTestFinished }) => {
        const { app, connection } = await connected(onTestFinished, factory, options())
        const [framingLines, body] = frame(EVENT)
        await connection.write(head('POST', '/hooks', [...JSON_TYPE, ...lines(), ...framingLines]), body)
        const reply = await firstAnswer(connection)
        expectRefusal(reply, 401, error)

        // A body within the limit is drained, so the connection is kept rather than closed.
        const after = await aftermath(connection, reply, [await delivery(options())])
        expect(after, 'what became of the connection').toMatchObject({ outcome: 'kept' })
        if (after.outcome !== 'kept') return
        expect(after.next.status, after.next.text.slice(0, 300)).toBe(200)
        expect((JSON.parse(after.next.text) as Received).payload).toEqual(JSON.parse(EVENT))
        expect(app.handled()).toBe(1)
      },
    )
  })

  describe('from a sender that pipelines', () => {
    // HTTP/1.1 lets a sender write its next request before the answer to the one before: each is
    // answered, in order, the second though its body arrives only after the first's answer is out.
    const forged: Lines = [[SIGNATURE, 'ab'.repeat(32)]]
    it.for([
      { first: 'a delivery', status: 200, lines: async () => credentials(secret(), EVENT), handled: 2 },
      { first: 'a forged delivery', status: 401, lines: async () => forged, handled: 1 },
    ])(
      'answers $first and then the delivery written right behind it, whose body arrives after that answer',
      { timeout: TEST_TIMEOUT },
      async ({ status, lines, handled }, { onTestFinished }) => {
        const { app, connection } = await connected(onTestFinished, factory, secret())
        const length: Lines = [['Content-Length', String(EVENT.length)]]
        const second = head('POST', '/hooks', [...JSON_TYPE, ...(await credentials(secret(), EVENT)), ...length])
        await connection.write(`${head('POST', '/hooks', [...JSON_TYPE, ...(await lines()), ...length])}${EVENT}${second}`)
        const reply = await firstAnswer(connection)
        expect(reply.status, reply.text.slice(0, 300)).toBe(status)
        expect(announcesClose(reply)).toBe(false)
        await connection.write(EVENT)
        const next = await firstAnswer(connection)
        expect(next.status, next.text.slice(0, 300)).toBe(200)
        expect((JSON.parse(next.text) as Received).payload).toEqual(JSON.parse(EVENT))
        expect(app.handled()).toBe(handled)
      },
    )
  })

  describe('after an early 401 for a body over maxBodySize', () => {
    const wrongPassword: Lines = [['Authorization', formatBasicAuthorization(BASIC.username, 'wrong horse')]]
    it.for([
      { framing: 'declared with Content-Length', lines: [['Content-Length', String(256 * KIB)]] as Lines, body: bodyStart(256 * KIB) },
      { framing: 'chunked', lines: [['Transfer-Encoding', 'chunked']] as Lines, body: chunked(Array(256).fill(bodyStart(KIB))) },
    ])(
      'answers 401 once it has drained the body, and then the next delivery on the same connection ($framing, 256 KiB sent in full)',
      { timeout: TEST_TIMEOUT },
      async ({ lines, body }, { onTestFinished }) => {
        const { app, connection } = await connected(onTestFinished, factory, basic())
        await connection.write(head('POST', '/hooks', [...JSON_TYPE, ...wrongPassword, ...lines]), body)
        const reply = await firstAnswer(connection)
        expectRefusal(reply, 401, 'invalid_credentials')
        expectKept(await aftermath(connection, reply, [await delivery(basic())]))
        expect(app.handled()).toBe(1)
      },
    )
  })

  describe('to a sender that writes its whole request before reading the answer (as the service does)', () => {
    // The service's Java sender writes the whole body, then reads. A server that answers early and
    // closes with its bytes unread resets the connection, and the reset erases the answer: the
    // sender sees a broken pipe instead of a 413. Twenty deliveries each, on a connection of their
    // own, against a limit of 1 MiB; the early 401s are mode 'basic' without credentials. A body
    // refused for its encoding is drained like any other (its bytes are discarded, never inflated).
    const ROUNDS = 20
    const big = bodyStart(2 * MIB)
    const small = bodyStart(64 * KIB)
    // Bytes a sender calls compressed; their content is never read.
    const compressed = bodyStart(4 * MIB)
    const gzipped = (): (string | Buffer)[] => [
      head('POST', '/hooks', [...JSON_TYPE, ['Content-Encoding', 'gzip'], ['Content-Length', String(compressed.length)]]),
      Buffer.from(compressed),
    ]
    const cases = [
      {
        what: '413, Content-Length 2 MiB',
        options: (): WebhookOptions => ({ auth: { mode: 'none' }, maxBodySize: MIB }),
        request: (): (string | Buffer)[] => [
          head('POST', '/hooks', [...JSON_TYPE, ['Content-Length', String(big.length)]]),
          Buffer.from(big),
        ],
        status: 413,
        error: 'payload_too_large',
      },
      {
        what: '413, chunked 2 MiB',
        options: (): WebhookOptions => ({ auth: { mode: 'none' }, maxBodySize: MIB }),
        request: (): (string | Buffer)[] => [
          head('POST', '/hooks', [...JSON_TYPE, ['Transfer-Encoding', 'chunked']]),
          chunked(Array(32).fill(bodyStart(64 * KIB))),
        ],
        status: 413,
        error: 'payload_too_large',
      },
      {
        what: '401 early, 2 MiB',
        options: (): WebhookOptions => ({ auth: { mode: 'basic', ...BASIC }, maxBodySize: MIB }),
        request: (): (string | Buffer)[] => [
          head('POST', '/hooks', [...JSON_TYPE, ['Content-Length', String(big.length)]]),
          Buffer.from(big),
        ],
        status: 401,
        error: 'missing_credentials',
      },
      {
        what: '415, Content-Encoding: gzip, 4 MiB',
        options: (): WebhookOptions => ({ auth: { mode: 'none' }, maxBodySize: MIB }),
        request: gzipped,
        status: 415,
        error: 'unsupported_encoding',
      },
      {
        what: "415, Transfer-Encoding: 'gzip, chunked', 4 MiB",
        options: (): WebhookOptions => ({ auth: { mode: 'none' }, maxBodySize: MIB }),
        request: (): (string | Buffer)[] => [
          head('POST', '/hooks', [...JSON_TYPE, ['Transfer-Encoding', 'gzip, chunked']]),
          chunked(Array(64).fill(bodyStart(64 * KIB))),
        ],
        status: 415,
        error: 'unsupported_encoding',
      },
      {
        what: '401 early, Content-Encoding: gzip, 4 MiB',
        options: (): WebhookOptions => ({ auth: { mode: 'basic', ...BASIC }, maxBodySize: MIB }),
        request: gzipped,
        status: 401,
        error: 'missing_credentials',
      },
      {
        what: '401 early, 64 KiB',
        options: (): WebhookOptions => ({ auth: { mode: 'basic', ...BASIC }, maxBodySize: MIB }),
        request: (): (string | Buffer)[] => [
          head('POST', '/hooks', [...JSON_TYPE, ['Content-Length', String(small.length)]]),
          Buffer.from(small),
        ],
        status: 401,
        error: 'missing_credentials',
      },
    ]

    it.for(cases)(
      'reads every answer, 20 of 20, and then the next delivery on the same connection ($what)',
      { timeout: 40_000 },
      async ({ options, request, status, error }, { onTestFinished }) => {
        const app = await served(onTestFinished, factory, options())
        const next = [await delivery(options())]
        const results = await writeFirstRounds(app.port as number, { rounds: ROUNDS, request: request(), next, budgetMs: 25_000 })
        const summary = describeRounds(results, ROUNDS)
        const answered = results.filter(({ reply }) => reply?.status === status)
        expect(answered.length, summary).toBe(ROUNDS)
        for (const { reply, after } of results) {
          expectRefusal(reply as Reply, status, error)
          // Drained to its end: the connection is kept, and carries the next delivery.
          expect(after?.outcome === 'kept' ? after.next.status : after, summary).toBe(200)
        }
        expect(app.handled()).toBe(ROUNDS)
      },
    )
  })

  // Not beside the others: a fault it catches is the process's, and belongs to this adapter alone.
  describe('with a hand-off', () => {
    it('survives a sender that drops the connection while its job is being queued: the job is queued, and the retry is told it is a duplicate', {
      timeout: TEST_TIMEOUT,
    }, async ({ onTestFinished }) => {
      const faults = watchProcessFaults()
      onTestFinished(() => faults.stop())
      const held = heldQueue()
      const { app, connection } = await connected(onTestFinished, factory, handing(held.queue))
      await connection.write(await signedRequest(EVENT))
      expect(await until(() => held.calls() === 1), 'the receiver called enqueue').toBe(true)
      connection.destroy()
      // The server's side of the close is not seen from here: a few turns on loopback let it arrive
      // before the queue answers (were it later, the answer would still meet a closed socket).
      await new Promise((resolve) => setTimeout(resolve, 50))
      held.release()
      // The service heard nothing, so it delivers again: the job is there, and the copy adds none.
      const retry = await connect(app.port as number)
      onTestFinished(() => retry.destroy())
      await retry.write(await signedRequest(EVENT))
      expect(await until(() => held.calls() === 2), 'the retry reached the queue').toBe(true)
      held.release()
      const reply = await firstAnswer(retry)
      expect(reply.status, reply.text).toBe(200)
      expect(JSON.parse(reply.text)).toMatchObject({ duplicate: true })
      expect(held.jobs.size).toBe(1)
      expect(app.handled()).toBe(0)
      // And the server goes on: a new delivery on the retry's connection is queued.
      const other = '{"event":"customer.created","data":{"id":884212}}'
      const answering = firstAnswer(retry)
      await retry.write(await signedRequest(other))
      expect(await until(() => held.calls() === 3)).toBe(true)
      held.release()
      expect((await answering).status).toBe(202)
      expect(faults.seen(), 'unhandled rejections and uncaught exceptions').toEqual([])
    })
  })

  describe("with a Content-Length list, which Node's HTTP parser refuses before any app code runs", () => {
    const over = String(4 * LIMIT)
    it.for([
      { lines: [['Content-Length', `${over}, ${over}`]] as Lines, why: `'Content-Length: ${over}, ${over}' (over maxBodySize)` },
      {
        lines: [
          ['Content-Length', over],
          ['Content-Length', over],
        ] as Lines,
        why: `Content-Length: ${over} on two lines`,
      },
      { lines: [['Content-Length', '5, 6']] as Lines, why: "'Content-Length: 5, 6'" },
      {
        lines: [
          ['Content-Length', '5'],
          ['Content-Length', '6'],
        ] as Lines,
        why: 'Content-Length: 5 and 6 on two lines',
      },
    ])(
      'is answered 400 by Node itself, with Connection: close, and the connection closes; the next connection is served ($why)',
      { timeout: TEST_TIMEOUT },
      async ({ lines }, { onTestFinished }) => {
        const { app, connection } = await connected(onTestFinished, factory, none())
        await connection.write(head('POST', '/hooks', [...JSON_TYPE, ...lines]), bodyStart(64))
        const reply = await firstAnswer(connection)
        expect(reply.status).toBe(400)
        const own = PARSER_REFUSALS[factory.name] ?? NODE_REFUSAL
        expect(reply.text, "the server's own answer, not hookguard's").toBe(own.text)
        expect(announcesClose(reply), 'Connection: close announced').toBe(own.announcesClose)
        expect(await connection.closed(), 'the server closed the connection').toBe(true)

        const next = await connect(app.port as number)
        onTestFinished(() => next.destroy())
        await next.write(await delivery(none()))
        expect((await next.reply())?.status).toBe(200)
        expect(app.handled()).toBe(1)
      },
    )
  })
})

/**
 * A queue as the hand-off sees it, whose answers the test holds: each `enqueue` keeps its job (by
 * id, as a real queue does) and is answered when the test releases it, or never (`stuck`).
 */
function heldQueue({ stuck = false } = {}) {
  const jobs = new Map<string, HandoffJob>()
  const pending: (() => void)[] = []
  let calls = 0
  const queue: HandoffQueue = {
    enqueue(job) {
      calls += 1
      const duplicate = jobs.has(job.id)
      jobs.set(job.id, job)
      if (stuck) return new Promise<never>(() => {})
      return new Promise((resolve) => pending.push(() => resolve({ jobId: job.id, duplicate })))
    },
  }
  const release = () => {
    for (const answer of pending.splice(0)) answer()
  }
  return { queue, jobs, calls: () => calls, release }
}

const HANDOFF_TIMEOUT = 200
const handing = (queue: HandoffQueue): WebhookOptions => ({
  auth: { mode: 'secret', secret: SECRET },
  maxBodySize: MIB,
  handoff: { queue, timeout: HANDOFF_TIMEOUT },
})
const signedRequest = async (body: string) =>
  `${head('POST', '/hooks', [...JSON_TYPE, [SIGNATURE, await sign(body, SECRET)], ['Content-Length', String(body.length)]])}${body}`

/** Waits, at most `ms`, until `done()` holds; false when it never did. */
async function until(done: () => boolean, ms = TEST_TIMEOUT / 2): Promise<boolean> {
  const deadline = Date.now() + ms
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5))
  return done()
}

// The cases a receiver answers only once its idle bound has passed: each waits the real bound (the
// wait is what they check), so all of them, for every adapter, wait side by side.
describe.concurrent.each(serverFactories)('$name', (factory) => {
  describe('after a chunked body that grows past maxBodySize', () => {
    it.for([
      { mode: 'none', options: none },
      { mode: 'secret', options: secret },
    ])(
      `answers 413 with Connection: close about ${DRAIN_IDLE_MS} ms after the sender stopped mid-body, and closes the connection (mode '$mode')`,
      { timeout: TEST_TIMEOUT },
      async ({ options }, { onTestFinished }) => {
        const { app, connection } = await connected(onTestFinished, factory, options())
        const lines: Lines = [...JSON_TYPE, ...(await credentials(options(), '')), ['Transfer-Encoding', 'chunked']]
        const started = Date.now()
        await connection.write(head('POST', '/hooks', lines), chunked(Array(8).fill(bodyStart(256)), false))
        const reply = await firstAnswer(connection)
        expectRefusal(reply, 413, 'payload_too_large')
        expect(Date.now() - started, 'waited for the idle bound, and not much longer').toBeGreaterThanOrEqual(DRAIN_IDLE_MS - 100)
        // Not drained: the answer announces the close, and the server closes.
        const after = await aftermath(connection, reply, [await delivery(options())])
        expect(after, 'what became of the connection').toEqual({ outcome: 'closed' })
        expect(app.handled()).toBe(0)
      },
    )
  })

  describe('after a declared Content-Length over maxBodySize', () => {
    it.for([
      { declared: 4 * KIB, sent: 2 * KIB, why: `the sender stops mid-body: after about ${DRAIN_IDLE_MS} ms` },
      { declared: LIMIT + DRAIN_MAX_BYTES + 1, sent: 2 * KIB, why: 'a length over what would be drained: at once' },
    ])(
      'answers 413 payload_too_large with Connection: close, and closes the connection ($why)',
      { timeout: TEST_TIMEOUT },
      async ({ declared, sent }, { onTestFinished }) => {
        const { app, connection } = await connected(onTestFinished, factory, none())
        await connection.write(head('POST', '/hooks', [...JSON_TYPE, ['Content-Length', String(declared)]]), bodyStart(sent))
        const reply = await firstAnswer(connection)
        expectRefusal(reply, 413, 'payload_too_large')
        // Not drained: the answer announces the close, and the server closes.
        const after = await aftermath(connection, reply, [await delivery(none())])
        expect(after, 'what became of the connection').toEqual({ outcome: 'closed' })
        expect(app.handled()).toBe(0)
      },
    )
  })

  describe('with a hand-off', () => {
    // Within the limit, and more than a socket's buffer takes at once: the sender is still writing
    // while the receiver reads, and has written it all by the time the queue is waited for.
    const padded = JSON.stringify({ event: 'customer.created', data: { id: 884211, note: 'x'.repeat(96 * KIB) } })

    it(`answers 503 queue_unavailable after handoff.timeout to a sender that writes first, when the queue never answers, and keeps the connection for the next delivery`, {
      timeout: TEST_TIMEOUT,
    }, async ({ onTestFinished }) => {
      const ROUNDS = 5
      const held = heldQueue({ stuck: true })
      const app = await served(onTestFinished, factory, handing(held.queue))
      const request = [await signedRequest(padded)]
      const started = Date.now()
      const results = await writeFirstRounds(app.port as number, {
        rounds: ROUNDS,
        request,
        next: [await signedRequest(EVENT)],
        budgetMs: 8_000,
      })
      const summary = describeRounds(results, ROUNDS)
      expect(results.filter(({ reply }) => reply?.status === 503).length, summary).toBe(ROUNDS)
      for (const { reply, after } of results) {
        expectRefusal(reply as Reply, 503, 'queue_unavailable')
        expect((reply as Reply).headers['retry-after']).toBe('5')
        // Not held open waiting for the queue: the connection carries the next delivery, which
        // the queue leaves unanswered too.
        expect(after?.outcome === 'kept' ? after.next.status : after, summary).toBe(503)
      }
      expect(Date.now() - started, 'each answer came at the timeout, not at a stall').toBeGreaterThanOrEqual(2 * ROUNDS * HANDOFF_TIMEOUT)
      expect(held.calls()).toBe(2 * ROUNDS)
      expect(app.handled()).toBe(0)
    })
  })

  describe('for a sender that stops sending a body within the limit, before it can be judged', () => {
    it.for([
      { mode: 'secret', options: secret, framing: 'Content-Length', lines: [['Content-Length', '1000']] as Lines, body: bodyStart(400) },
      {
        mode: 'secret',
        options: secret,
        framing: 'chunked',
        lines: [['Transfer-Encoding', 'chunked']] as Lines,
        body: chunked([bodyStart(400)], false),
      },
      { mode: 'none', options: none, framing: 'Content-Length', lines: [['Content-Length', '1000']] as Lines, body: bodyStart(400) },
    ])(
      `answers 400 invalid_body with Connection: close once no byte came for ${BODY_IDLE_MS} ms (${BODY_MAX_MS} ms for a body read whole), and closes (mode '$mode', $framing)`,
      { timeout: BODY_MAX_MS + TEST_TIMEOUT },
      async ({ options, framing, lines, body }, { onTestFinished }) => {
        // The Fetch handler reads a declared body whole (`arrayBuffer()`), which shows no byte before
        // the last: only the total bound can apply there.
        const bound = factory.name.startsWith('Fetch handler') && framing === 'Content-Length' ? BODY_MAX_MS : BODY_IDLE_MS
        const { app, connection } = await connected(onTestFinished, factory, options())
        // Any signature: the receiver cannot tell it from a genuine one before the last byte.
        const signature: Lines = options().auth.mode === 'secret' ? [[SIGNATURE, 'ab'.repeat(32)]] : []
        const started = Date.now()
        await connection.write(head('POST', '/hooks', [...JSON_TYPE, ...signature, ...lines]), body)
        // A loaded machine fires a timer late by a second or two; Node's own bound is 300 s.
        const reply = await firstAnswer(connection, bound + 5000)
        expectRefusal(reply, 400, 'invalid_body')
        const waited = Date.now() - started
        expect(waited, 'answered at the bound, not at a framework timeout').toBeGreaterThanOrEqual(bound - 100)
        expect(waited, 'answered at the bound, not at a framework timeout').toBeLessThan(bound + 5000)
        expect(await aftermath(connection, reply, [await delivery(options())]), 'what became of the connection').toEqual({
          outcome: 'closed',
        })
        expect(app.handled()).toBe(0)
      },
    )
  })

  describe('after an early 401, for a sender that stops sending its body', () => {
    const noCredentials: Lines = []
    it.for([
      {
        framing: 'declared with Content-Length, 10 of 100 000 bytes sent',
        lines: [['Content-Length', '100000']] as Lines,
        body: bodyStart(10),
      },
      { framing: 'chunked, one chunk sent', lines: [['Transfer-Encoding', 'chunked']] as Lines, body: chunked([bodyStart(5)], false) },
    ])(
      `answers 401 with Connection: close once no byte came for ${DRAIN_IDLE_MS} ms, within the limit too, and closes ($framing)`,
      { timeout: TEST_TIMEOUT },
      async ({ lines, body }, { onTestFinished }) => {
        const { app, connection } = await connected(onTestFinished, factory, basic())
        const started = Date.now()
        await connection.write(head('POST', '/hooks', [...JSON_TYPE, ...noCredentials, ...lines]), body)
        const reply = await firstAnswer(connection)
        expectRefusal(reply, 401, 'missing_credentials')
        expect(Date.now() - started, 'answered at the idle bound, not at a framework timeout').toBeLessThan(DRAIN_IDLE_MS + 1500)
        expect(await aftermath(connection, reply, [await delivery(basic())]), 'what became of the connection').toEqual({
          outcome: 'closed',
        })
        expect(app.handled()).toBe(0)
      },
    )
  })
})
