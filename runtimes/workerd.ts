import { clock } from '@hookguard/conformance/cases'
import { type Reply, sendTo } from '@hookguard/testkit/http'
import { Miniflare } from 'miniflare'
import { workerModules } from './bundle.ts'
import { checkReadmeWorkers } from './readme-workers.ts'
import { parseArgs } from './suite/args.ts'
import { type Outcome, Tally } from './suite/reply.ts'
import { ANSWER_PATH, APP_HEADER, CASE_HEADER, CHECKS_PATH, CLOCK_HEADER, HANDLED_HEADER, runTable } from './suite/table.ts'

// Runs the Worker bundle (`bundle.ts`, from `worker.ts`) in workerd through miniflare, which needs
// Node 22 or later: `runtimes/node_modules/node24/bin/node runtimes/workerd.ts --worker=<bundle> --mock=<url>`.
// Node 24 strips this file's types itself.

/** The docs' wrangler.jsonc date (what users run), fixed, so that a newer workerd cannot change what the Worker may use without us noticing. */
const COMPATIBILITY_DATE = '2026-04-26'
const ORIGIN = 'http://hookguard.test'

const args = parseArgs(process.argv.slice(2))
if (args.worker === undefined) throw new TypeError('workerd.ts: pass --worker=<path to the bundled Worker>')

const tally = new Tally()
const mf = new Miniflare({
  // The script and the core's strip.wasm, as wrangler uploads them.
  modules: await workerModules(args.worker),
  compatibilityDate: COMPATIBILITY_DATE,
  // No `nodejs_compat`: a Node API slipping into the edge build must fail here.
  compatibilityFlags: [],
  bindings: args.mock === undefined ? {} : { MOCK_URL: args.mock },
})

let loaded = false
try {
  await tally.check('the Worker loads in workerd', async () => {
    await mf.ready
    loaded = true
  })
  if (loaded) await runChecks()
} finally {
  // A Worker that failed to start may fail to stop too; that failure is reported above.
  await mf.dispose().catch(() => undefined)
}
// The READMEs' own Workers, each in a workerd of its own.
await checkReadmeWorkers(tally)
process.exitCode = tally.report('workerd (edge build)') === 0 ? 0 : 1

async function runChecks(): Promise<void> {
  const res = await mf.dispatchFetch(new URL(CHECKS_PATH, ORIGIN))
  const text = await res.text()
  if (res.ok) tally.add(JSON.parse(text) as Outcome[])
  else tally.add([{ name: 'the in-Worker checks answer', error: `${res.status}: ${text.slice(0, 500)}` }])

  // The table's requests go over HTTP to miniflare's loopback address, with the conformance suite's
  // own sender, as a client would send them to a Worker.
  const { port } = await mf.ready
  for (const [app, name] of [
    ['hono', 'hono'],
    ['fetch', 'fetch handler'],
  ] as const) {
    await runTable(tally, `${name} (HTTP to workerd)`, (id) => {
      let handled = 0
      return {
        async send(outgoing) {
          const headers = { ...outgoing.headers, [APP_HEADER]: app, [CASE_HEADER]: id, [CLOCK_HEADER]: String(clock.now) }
          let reply: Reply
          try {
            reply = await sendTo(Number(port), { ...outgoing, headers })
          } catch (error) {
            // workerd closes the connection as soon as it has answered a body it would not read, and
            // the reset can overtake its answer on the wire (it does not linger, RFC 9112 §9.6). Then
            // the answer is taken from the Worker, and the upload was cut short by that close.
            if (outgoing.stream === undefined || !isConnectionReset(error)) throw error
            reply = { ...(await recordedAnswer(app, id)), streamedAll: false }
            console.log(`note: row ${id}'s connection (${name}) was reset mid-upload; its answer was read from the Worker`)
          }
          handled = Number(reply.headers[HANDLED_HEADER] ?? 0)
          delete reply.headers[HANDLED_HEADER]
          return reply
        },
        handled: () => handled,
      }
    })
  }
}

async function recordedAnswer(app: string, id: string): Promise<Reply> {
  const res = await mf.dispatchFetch(`${ORIGIN}${ANSWER_PATH}?app=${app}&case=${encodeURIComponent(id)}`)
  const answer = (await res.json()) as Reply | null
  if (answer === null) throw new Error(`the connection was reset before the Worker answered row ${id}`)
  return answer
}

function isConnectionReset(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'ECONNRESET' || code === 'EPIPE'
}
