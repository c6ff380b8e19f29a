import { clock } from '@hookguard/conformance/cases'
import { fetchApp } from '@hookguard/conformance/fetch-app'
import { honoApp } from '@hookguard/conformance/hono-app'
import type { Reply } from '@hookguard/testkit/http'
// @ts-expect-error: the edge build's types are `dist/index.d.ts`; only its identity is needed here.
import * as edgeBuild from '../packages/core/dist/edge/index.js'
import { runPortable } from './suite/portable.ts'
import { assert, Tally } from './suite/reply.ts'
import { ANSWER_PATH, APP_HEADER, CASE_HEADER, CHECKS_PATH, CLOCK_HEADER, findRow, HANDLED_HEADER } from './suite/table.ts'

/**
 * The Worker that `workerd.ts` runs in workerd, without `nodejs_compat`; `bundle.ts` builds it
 * with the Worker conditions, so with the core's edge build. `CHECKS_PATH` runs here what Bun and Deno run in process. Every
 * other request belongs to a row of the conformance table, sent over HTTP by the driver; the
 * table's options hold functions, so the row's app is built here, from the same table.
 */

interface Env {
  MOCK_URL?: string
}

/** The Hono app or the fetch handler built for one row. */
interface UnderTest {
  fetch(request: Request): Response | Promise<Response>
  handled(): number
}

const apps = new Map<string, UnderTest>()
const answers = new Map<string, Reply & { handled: number }>()

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url)
    if (url.pathname === CHECKS_PATH) return Response.json((await checks(env)).outcomes)
    if (url.pathname === ANSWER_PATH) {
      return Response.json(answers.get(`${url.searchParams.get('app')} ${url.searchParams.get('case')}`) ?? null)
    }

    const id = request.headers.get(CASE_HEADER) ?? ''
    const row = findRow(id)
    if (row === undefined) return new Response(`no row ${id} in the conformance table`, { status: 404 })
    clock.now = Number(request.headers.get(CLOCK_HEADER))
    const kind = request.headers.get(APP_HEADER) === 'fetch' ? 'fetch' : 'hono'
    const key = `${kind} ${id}`
    let entry = apps.get(key)
    if (entry === undefined) {
      entry = kind === 'fetch' ? fetchApp(row.options()) : honoUnderTest(row.options())
      apps.set(key, entry)
    }
    const res = await entry.fetch(request)
    const answer = new Response(res.body, res)
    answer.headers.set(HANDLED_HEADER, String(entry.handled()))
    const headers: Record<string, string> = {}
    answer.headers.forEach((value, name) => {
      headers[name] = value
    })
    answers.set(key, { status: answer.status, headers, text: await answer.clone().text(), handled: entry.handled() })
    return answer
  },
}

function honoUnderTest(options: Parameters<typeof honoApp>[0]): UnderTest {
  const { app, handled } = honoApp(options)
  return { fetch: (request) => app.fetch(request), handled }
}

async function checks(env: Env): Promise<Tally> {
  const tally = new Tally()
  await tally.check('workerd runs the Worker without nodejs_compat (no Buffer, no process)', () => {
    // Were they there, a Node API used by the Web build could pass here and fail on a user's Worker.
    assert(!('Buffer' in globalThis) && !('process' in globalThis), 'Node globals are present')
  })
  // The bundle links strip.wasm in as a compiled module, which workerd hands over: no bytes to compile.
  return runPortable({ build: 'edge', reference: edgeBuild, mockUrl: env.MOCK_URL, stripper: 'wasm-import' }, tally)
}
