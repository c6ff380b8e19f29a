import { fetchApp } from '@hookguard/conformance/fetch-app'
import { honoApp } from '@hookguard/conformance/hono-app'
import { DRAIN_MAX_BYTES, type WebhookOptions } from '@hookguard/core'
import type { Reply } from '@hookguard/testkit/http'
import {
  aftermath,
  announcesClose,
  type Connection,
  chunked,
  connect,
  describeRounds,
  head,
  writeFirstRounds,
} from '@hookguard/testkit/wire'
import { assert, same, type Tally } from './reply.ts'

// The Hono adapter and the fetch handler behind the runtime's own HTTP server (`Bun.serve`, `Deno.serve`), spoken to
// over a raw socket: what that server's parser lets through to the app (a Content-Length on two
// lines), what it refuses itself, and what becomes of the connection after hookguard refuses a
// body. Bun and Deno only: the Worker bundle has no server and no `node:net`.

type FetchHandler = (request: Request) => Response | Promise<Response>

/** Builds the app under test for `options`: the conformance suite's Hono app or fetch handler. */
type Build = (options: WebhookOptions) => { fetch: FetchHandler; handled(): number }

const APPS: readonly (readonly [string, Build])[] = [
  [
    'Hono',
    (options) => {
      const { app, handled } = honoApp(options)
      return { fetch: (request) => app.fetch(request), handled }
    },
  ],
  ['fetch handler', fetchApp],
]

interface BunServer {
  port: number
  stop(closeActiveConnections?: boolean): unknown
}
interface DenoServer {
  addr: { port: number }
  shutdown(): Promise<void>
}
interface Runtimes {
  Bun?: { serve(options: { hostname: string; port: number; fetch: FetchHandler }): BunServer }
  Deno?: {
    serve(options: { hostname: string; port: number; onListen?: () => void }, handler: FetchHandler): DenoServer
    memoryUsage(): { rss: number }
  }
}

interface Listening {
  port: number
  close(): Promise<void>
}

const KIB = 1024
const MIB = 1024 * KIB
/**
 * What the review's sender declared (64 MiB), and a little more: far more than any receiver
 * should hold for an unauthenticated request, and past what hookguard drains after a refusal, so
 * that it is refused before reading.
 */
const HUGE = DRAIN_MAX_BYTES + 64 * KIB
const LIMIT = 4 * KIB
/** What draining a few bodies of `DRAIN_MAX_BYTES` may grow a Deno process by: a quarter of one body. */
const DRAIN_GROWTH_BOUND = 16 * MIB
const EVENT = '{"event":"customer.created","tenant":"acme","data":{"id":884211}}'
const BASIC = { username: 'hook-user', password: 'correct horse' }
const JSON_TYPE: [string, string][] = [['Content-Type', 'application/json']]
/** Long enough for a loaded machine, short enough that a stalled check fails rather than hangs the run. */
const WAIT_MS = 3000

/** Serves `handler` on 127.0.0.1 with the runtime's own server. */
function serve(handler: FetchHandler): Listening {
  const { Bun, Deno } = globalThis as Runtimes
  if (Bun !== undefined) {
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: handler })
    return { port: server.port, close: async () => void (await server.stop(true)) }
  }
  if (Deno !== undefined) {
    const server = Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: () => {} }, handler)
    // A graceful shutdown waits for open requests; a check that failed may leave one behind.
    return {
      port: server.addr.port,
      close: () => Promise.race([server.shutdown(), new Promise<void>((done) => setTimeout(done, WAIT_MS))]),
    }
  }
  throw new Error('this runtime has no HTTP server of its own')
}

/** Serves the app `build` makes with `options`, opens a connection, runs `use`, and closes both. */
async function withConnection(
  build: Build,
  options: WebhookOptions,
  use: (connection: Connection, handled: () => number) => Promise<void>,
): Promise<void> {
  const { fetch, handled } = build(options)
  const server = serve(fetch)
  let connection: Connection | undefined
  try {
    connection = await connect(server.port)
    await use(connection, handled)
  } finally {
    connection?.destroy()
    await server.close()
  }
}

async function answer(connection: Connection): Promise<Reply> {
  const reply = await connection.reply(WAIT_MS)
  if (reply !== undefined) return reply
  throw new Error((await connection.closed(0)) ? 'the server closed the connection without answering' : `no answer within ${WAIT_MS} ms`)
}

/** hookguard's own refusal. */
function refusal(reply: Reply, status: number, error: string): void {
  same(reply.status, status, `status (answer: ${reply.text.slice(0, 200)})`)
  const body = JSON.parse(reply.text) as { error?: unknown; message?: unknown }
  same(body.error, error, 'error')
  assert(typeof body.message === 'string', 'the answer has no message')
  same(reply.headers['cache-control'], 'no-store', 'header cache-control')
}

/** The runtime's own refusal: its parser answered, so no hookguard JSON, and it closes as it says. */
async function refusedByRuntime(connection: Connection, reply: Reply): Promise<void> {
  same(reply.status, 400, 'status')
  assert(!reply.text.includes('"error"'), `hookguard answered, not the runtime: ${reply.text.slice(0, 200)}`)
  assert(announcesClose(reply), 'the answer does not say Connection: close')
  assert(await connection.closed(WAIT_MS), 'the server kept the connection open')
}

function delivery(lines: [string, string][] = []): string {
  return `${head('POST', '/hooks', [...JSON_TYPE, ...lines, ['Content-Length', String(EVENT.length)]])}${EVENT}`
}

/** Every check of the runtime's own server, for each app; none where the runtime has no server (workerd runs its table over HTTP instead). */
export async function checkServed(tally: Tally, runtime: string): Promise<void> {
  const { Bun, Deno } = globalThis as Runtimes
  if (Bun === undefined && Deno === undefined) return
  for (const [app, build] of APPS) await checkServedApp(tally, `${runtime} server, ${app}`, build)
}

async function checkServedApp(tally: Tally, served: string, build: Build): Promise<void> {
  const { Bun, Deno } = globalThis as Runtimes
  const name = (what: string) => `${served}: ${what}`
  const none: WebhookOptions = { auth: { mode: 'none' }, maxBodySize: LIMIT }
  /**
   * Measured: Bun closes a connection once an answer that says `Connection: close` is sent. Deno's
   * server ignores that header from the application: it reads whatever is left of the body,
   * discarding it, and keeps the connection for the next request (a repeated Content-Length line
   * it closes itself, once the declared body has arrived). Either way no request stalls.
   */
  const closesAsAnnounced = Bun !== undefined

  await tally.check(name(`answers 413 to Content-Length: ${HUGE} on two lines after the first 4 KiB, reading no further`), () =>
    withConnection(build, none, async (connection, handled) => {
      // Passed on to the app joined as `N, N`, which a lenient `Number(…)` took for no length at
      // all: the whole body was then read into memory, and the answer waited for all of it.
      const length = String(HUGE)
      const start = `{"event":"${'x'.repeat(4 * KIB)}`
      await connection.write(head('POST', '/hooks', [...JSON_TYPE, ['Content-Length', length], ['Content-Length', length]]), start)
      const reply = await answer(connection)
      refusal(reply, 413, 'payload_too_large')
      assert(announcesClose(reply), 'the answer does not say Connection: close')
      same(handled(), 0, 'times the handler ran')
      if (closesAsAnnounced) {
        assert(await connection.closed(WAIT_MS), 'the server kept the connection open')
        return
      }
      // The rest of the declared body goes nowhere: the server's memory stays flat while it arrives.
      const rss = () => (Deno as NonNullable<Runtimes['Deno']>).memoryUsage().rss
      const before = rss()
      const chunk = new Uint8Array(MIB).fill(0x20)
      let left = HUGE - start.length
      for (; left > 0 && !(await connection.closed(0)); left -= chunk.length) await connection.write(chunk.subarray(0, Math.min(left, MIB)))
      assert(await connection.closed(WAIT_MS), 'the server kept the connection open after the declared body')
      assert(rss() - before < 32 * MIB, `the process grew by ${Math.round((rss() - before) / MIB)} MiB while the body arrived`)
    }),
  )

  if (Deno !== undefined) {
    // What hookguard drains itself: a body declared over the limit but within the drain bound,
    // read to its end and let go. Read chunk by chunk, each a new allocation freed only later,
    // three such bodies grew the process by 50 to 60 MiB; into one reused buffer, by about 10.
    const rounds = 3
    await tally.check(
      name(
        `drains ${rounds} bodies of ${DRAIN_MAX_BYTES / MIB} MiB (Content-Length on two lines), the process growing by under ${DRAIN_GROWTH_BOUND / MIB} MiB`,
      ),
      async () => {
        const { fetch, handled } = build(none)
        const server = serve(fetch)
        const rss = () => (Deno as NonNullable<Runtimes['Deno']>).memoryUsage().rss
        const chunk = new Uint8Array(MIB).fill(0x20)
        const length = String(DRAIN_MAX_BYTES)
        const before = rss()
        try {
          for (let round = 0; round < rounds; round++) {
            const connection = await connect(server.port)
            try {
              await connection.write(head('POST', '/hooks', [...JSON_TYPE, ['Content-Length', length], ['Content-Length', length]]))
              for (let left = DRAIN_MAX_BYTES; left > 0; left -= MIB) await connection.write(chunk)
              const reply = await answer(connection)
              refusal(reply, 413, 'payload_too_large')
              // Read to its end: the connection stays usable.
              assert(!announcesClose(reply), 'the answer says Connection: close')
            } finally {
              connection.destroy()
            }
          }
          const grown = rss() - before
          console.log(`  ${served}: ${rounds} × ${DRAIN_MAX_BYTES / MIB} MiB drained, the process grew by ${(grown / MIB).toFixed(1)} MiB`)
          assert(grown < DRAIN_GROWTH_BOUND, `the process grew by ${Math.round(grown / MIB)} MiB`)
          same(handled(), 0, 'times the handler ran')
        } finally {
          await server.close()
        }
      },
    )
  }

  await tally.check(name(`refuses Content-Length: ${HUGE}, ${HUGE} on one line itself (400), and closes as it announces`), () =>
    withConnection(build, none, async (connection, handled) => {
      await connection.write(
        head('POST', '/hooks', [...JSON_TYPE, ['Content-Length', `${HUGE}, ${HUGE}`]]),
        `{"event":"${'x'.repeat(4 * KIB)}`,
      )
      await refusedByRuntime(connection, await answer(connection))
      same(handled(), 0, 'times the handler ran')
    }),
  )

  for (const [lines, how] of [
    [[['Content-Length', '5, 6']], 'on one line'],
    [
      [
        ['Content-Length', '5'],
        ['Content-Length', '6'],
      ],
      'on two lines',
    ],
  ] as const) {
    await tally.check(name(`refuses Content-Length 5 and 6 ${how} itself (400), and closes as it announces`), () =>
      withConnection(build, none, async (connection, handled) => {
        await connection.write(head('POST', '/hooks', [...JSON_TYPE, ...lines]), 'hello!')
        await refusedByRuntime(connection, await answer(connection))
        same(handled(), 0, 'times the handler ran')
      }),
    )
  }

  // Neither runtime undoes a transfer coding but chunked: Bun refuses one itself, Deno hands on
  // the coded bytes with the header, which hookguard then refuses rather than judge them as the body.
  for (const coding of ['gzip, chunked', 'x-pack, chunked']) {
    await tally.check(
      name(`never hands a body in 'Transfer-Encoding: ${coding}' to the handler: the runtime's 400 or 415 unsupported_encoding`),
      () =>
        withConnection(build, none, async (connection, handled) => {
          await connection.write(head('POST', '/hooks', [...JSON_TYPE, ['Transfer-Encoding', coding]]), chunked([EVENT]))
          const reply = await answer(connection)
          if (reply.status === 400) await refusedByRuntime(connection, reply)
          else refusal(reply, 415, 'unsupported_encoding')
          same(handled(), 0, 'times the handler ran')
        }),
    )
  }

  await tally.check(name('delivers a body whose Content-Length comes on two identical lines'), () =>
    withConnection(build, none, async (connection, handled) => {
      const length = String(EVENT.length)
      await connection.write(head('POST', '/hooks', [...JSON_TYPE, ['Content-Length', length], ['Content-Length', length]]), EVENT)
      const reply = await answer(connection)
      same(reply.status, 200, `status (answer: ${reply.text.slice(0, 200)})`)
      same(handled(), 1, 'times the handler ran')
    }),
  )

  await tally.check(
    name('answers 413 to a chunked body past maxBodySize once it has drained it, then the next delivery on the connection'),
    () =>
      withConnection(build, none, async (connection, handled) => {
        await connection.write(head('POST', '/hooks', [...JSON_TYPE, ['Transfer-Encoding', 'chunked']]))
        await connection.write(chunked(Array(64).fill(`"${'x'.repeat(KIB - 1)}`)))
        const reply = await answer(connection)
        refusal(reply, 413, 'payload_too_large')
        // Read to its end: the connection is clean, and kept.
        assert(!announcesClose(reply), 'the answer says Connection: close')
        const after = await aftermath(connection, reply, [delivery()], WAIT_MS)
        same(after.outcome === 'kept' ? after.next.status : after, 200, 'the next delivery on the connection')
        same(handled(), 1, 'times the handler ran')
      }),
  )

  // The service's Java sender writes its whole body before it reads the answer: an answer sent
  // early, on a connection then closed with the sender's bytes unread, is erased by the reset.
  const ROUNDS = 20
  const big = `"${'x'.repeat(2 * MIB - 1)}`
  const small = `"${'x'.repeat(64 * KIB - 1)}`
  const withMib = (auth: WebhookOptions['auth']): WebhookOptions => ({ auth, maxBodySize: MIB })
  const noCredentials = withMib({ mode: 'basic', ...BASIC })
  const right: [string, string][] = [['Authorization', `Basic ${btoa(`${BASIC.username}:${BASIC.password}`)}`]]
  const writeFirst = [
    {
      what: '413 to Content-Length: 2 MiB over a 1 MiB limit',
      options: withMib({ mode: 'none' }),
      request: [head('POST', '/hooks', [...JSON_TYPE, ['Content-Length', String(big.length)]]), big],
      next: delivery(),
      status: 413,
    },
    {
      what: '413 to a chunked body of 2 MiB over a 1 MiB limit',
      options: withMib({ mode: 'none' }),
      request: [
        head('POST', '/hooks', [...JSON_TYPE, ['Transfer-Encoding', 'chunked']]),
        chunked(Array(32).fill(`"${'x'.repeat(64 * KIB - 1)}`)),
      ],
      next: delivery(),
      status: 413,
    },
    {
      what: "an early 401 (mode 'basic', no credentials) to 2 MiB over a 1 MiB limit",
      options: noCredentials,
      request: [head('POST', '/hooks', [...JSON_TYPE, ['Content-Length', String(big.length)]]), big],
      next: delivery(right),
      status: 401,
    },
    {
      what: "an early 401 (mode 'basic', no credentials) to 64 KiB within a 1 MiB limit",
      options: noCredentials,
      request: [head('POST', '/hooks', [...JSON_TYPE, ['Content-Length', String(small.length)]]), small],
      next: delivery(right),
      status: 401,
    },
  ]
  for (const { what, options, request, next, status } of writeFirst) {
    await tally.check(
      name(`a sender that writes its whole request first reads ${ROUNDS}/${ROUNDS} answers: ${what}, then the next delivery`),
      async () => {
        const { fetch, handled } = build(options)
        const server = serve(fetch)
        try {
          const results = await writeFirstRounds(server.port, { rounds: ROUNDS, request, next: [next], ms: WAIT_MS, budgetMs: 20_000 })
          const summary = describeRounds(results, ROUNDS)
          const read = results.filter(
            ({ reply, after }) => reply?.status === status && after?.outcome === 'kept' && after.next.status === 200,
          )
          same(read.length, ROUNDS, `answers read, then the next delivery answered 200 (${summary})`)
          same(handled(), ROUNDS, 'times the handler ran')
        } finally {
          await server.close()
        }
      },
    )
  }

  await tally.check(name('answers an early 401 to a small body, then the next delivery on the same connection'), () =>
    withConnection(build, { auth: { mode: 'basic', ...BASIC } }, async (connection, handled) => {
      await connection.write(delivery([['Authorization', `Basic ${btoa(`${BASIC.username}:wrong horse`)}`]]))
      const reply = await answer(connection)
      refusal(reply, 401, 'invalid_credentials')
      const right = `Basic ${btoa(`${BASIC.username}:${BASIC.password}`)}`
      const after = await aftermath(connection, reply, [delivery([['Authorization', right]])], WAIT_MS)
      same(after.outcome === 'kept' ? after.next.status : after, 200, 'the next delivery on the connection')
      same(handled(), 1, 'times the handler ran')
    }),
  )
}
