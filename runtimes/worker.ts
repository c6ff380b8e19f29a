import { clock } from '@hookguard/conformance/cases'
import { type HonoUnderTest, honoApp } from '@hookguard/conformance/hono-app'
import type { Reply } from '@hookguard/testkit/http'
// @ts-expect-error: the Web build's types are `dist/index.d.ts`; only its identity is needed here.
import * as webBuild from '../packages/core/dist/web/index.js'
import { runPortable } from './suite/portable.ts'
import { assert, Tally } from './suite/reply.ts'
import { ANSWER_PATH, CASE_HEADER, CHECKS_PATH, CLOCK_HEADER, findRow, HANDLED_HEADER } from './suite/table.ts'

/**
 * The Worker that `workerd.ts` runs in workerd, without `nodejs_compat`; `bundle.ts` builds it
 * with the Worker conditions. `CHECKS_PATH` runs here what Bun and Deno run in process. Every
 * other request belongs to a row of the conformance table, sent over HTTP by the driver; the
 * table's options hold functions, so the row's app is built here, from the same table.
 */

interface Env {
  MOCK_URL?: string
}

const apps = new Map<string, HonoUnderTest>()
const answers = new Map<string, Reply & { handled: number }>()

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url)
    if (url.pathname === CHECKS_PATH) return Response.json((await checks(env)).outcomes)
    if (url.pathname === ANSWER_PATH) return Response.json(answers.get(url.searchParams.get('case') ?? '') ?? null)

    const id = request.headers.get(CASE_HEADER) ?? ''
    const row = findRow(id)
    if (row === undefined) return new Response(`no row ${id} in the conformance table`, { status: 404 })
    clock.now = Number(request.headers.get(CLOCK_HEADER))
    let entry = apps.get(id)
    if (entry === undefined) {
      entry = honoApp(row.options())
      apps.set(id, entry)
    }
    const res = await entry.app.fetch(request)
    const answer = new Response(res.body, res)
    answer.headers.set(HANDLED_HEADER, String(entry.handled()))
    const headers: Record<string, string> = {}
    answer.headers.forEach((value, name) => {
      headers[name] = value
    })
    answers.set(id, { status: answer.status, headers, text: await answer.clone().text(), handled: entry.handled() })
    return answer
  },
}

async function checks(env: Env): Promise<Tally> {
  const tally = new Tally()
  await tally.check('workerd runs the Worker without nodejs_compat (no Buffer, no process)', () => {
    // Were they there, a Node API used by the Web build could pass here and fail on a user's Worker.
    assert(!('Buffer' in globalThis) && !('process' in globalThis), 'Node globals are present')
  })
  return runPortable({ build: 'web', reference: webBuild, mockUrl: env.MOCK_URL }, tally)
}
