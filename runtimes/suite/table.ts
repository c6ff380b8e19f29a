import { type Case, clock, contentLength, groups, SECRETS, START } from '@hookguard/conformance/cases'
import type { WebhookOptions } from '@hookguard/core'
import type { Outgoing, Reply } from '@hookguard/testkit/http'
import { type Tally, verifyReply } from './reply.ts'

/** A row of the conformance table with an id that a Worker and its driver agree on. */
export interface Row {
  id: string
  name: string
  row: Case
}

/** An app started for one row: how to send it a request, and how many times its handler ran. */
export interface Started {
  send(outgoing: Outgoing): Promise<Reply>
  handled(): number
}

// How the driver in Node talks to the Worker that holds the apps (`worker.ts`, `workerd.ts`).
/** Which row of the table a request belongs to. */
export const CASE_HEADER = 'x-runtimes-case'
/** Which app serves it: `hono` or `fetch` (the `@hookguard/fetch` handler). */
export const APP_HEADER = 'x-runtimes-app'
/** The row's clock, which its sender may have moved on (token expiry cases). */
export const CLOCK_HEADER = 'x-runtimes-clock'
/** How many times the row's handler has run so far. */
export const HANDLED_HEADER = 'x-runtimes-handled'
/** Runs, inside the Worker, everything that Bun and Deno run in process. */
export const CHECKS_PATH = '/__runtimes/checks'
/** The last answer the Worker gave for a row (`?app=<app>&case=<id>`), as it left the app. */
export const ANSWER_PATH = '/__runtimes/answer'

export const rows: readonly Row[] = groups.flatMap((group, g) =>
  group.cases.map((row, r) => ({ id: `${g}.${r}`, name: `${group.name} > ${row.name}`, row })),
)

/**
 * `rows`, and the Content-Length rows, sent only where a fetch `Request` reaches the app as it is:
 * over HTTP, workerd's front refuses every such length itself (500), and Bun and Deno refuse all
 * but a length repeated on two lines, which `served.ts` sends them over a socket.
 */
export const inProcessRows: readonly Row[] = [
  ...rows,
  ...contentLength.cases.map((row, r) => ({ id: `content-length.${r}`, name: `${contentLength.name} > ${row.name}`, row })),
]

export function findRow(id: string): Case | undefined {
  return rows.find((entry) => entry.id === id)?.row
}

/** Runs every row of `table` (by default the conformance table's groups) against an app that `start` builds for it; `how` names the app and how it is reached. */
export async function runTable(
  tally: Tally,
  how: string,
  start: (id: string, options: WebhookOptions) => Started,
  table: readonly Row[] = rows,
): Promise<void> {
  for (const { id, name, row } of table) {
    await tally.check(`${how}: ${name}`, async () => {
      clock.now = START
      const options = row.options()
      const app = start(id, options)
      const sent: Outgoing[] = []
      const reply = await row.send({
        send: (outgoing) => {
          sent.push(outgoing)
          return app.send(outgoing)
        },
        close: async () => {},
      })
      verifyReply(reply, row.expect, { mode: options.auth.mode, handled: app.handled(), sent, secrets: SECRETS })
    })
  }
}
