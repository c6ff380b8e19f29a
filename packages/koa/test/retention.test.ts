import { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { webhook } from '@hookguard/koa'
import { auth, signed } from '@hookguard/testkit/adapter-tests'
import Koa from 'koa'
import { expect, it } from 'vitest'

// A request answered leaves nothing behind. What outlives it costs every young collection a copy,
// then a promotion, and every major one a mark, for as long as the server runs: a body reader made
// as a function given a property once kept whole requests (Koa's context, the streams, the
// payload), several KB each, through V8's young collections (bench/notes.md).

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as (options: { type: 'minor' }) => void
const youngBytes = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_used_size ?? 0

const body = Buffer.from(signed.body as string)
const headers = { ...signed.headers, 'content-length': String(body.length), host: '127.0.0.1' }
const rawHeaders = Object.entries(headers).flat()

const app = new Koa()
app.silent = true
app.use(webhook({ auth }))
app.use((ctx) => {
  ctx.status = ctx.state.webhook === undefined ? 500 : 204
})
const handle = app.callback()

/** One delivery through Koa in process, its body waiting in the stream as Node's parser leaves it. */
async function deliver(): Promise<number> {
  const req = new IncomingMessage(null as unknown as Socket)
  req.method = 'POST'
  req.url = signed.path
  req.rawHeaders = rawHeaders
  Object.assign(req.headers, headers)
  req.push(body)
  req.push(null)
  req.complete = true
  const res = new ServerResponse(req)
  await handle(req, res)
  return res.statusCode
}

it('keeps nothing of a delivery it answered past the next young-generation collection', async () => {
  const REQUESTS = 300
  const statuses = new Set<number>()
  // Warmed first: the compilers settle, and what the first requests leave behind is not counted.
  for (let i = 0; i < REQUESTS; i++) statuses.add(await deliver())
  // Twice: what was young before is then promoted, or gone.
  gc({ type: 'minor' })
  gc({ type: 'minor' })
  for (let i = 0; i < REQUESTS; i++) statuses.add(await deliver())
  gc({ type: 'minor' })
  expect(statuses).toEqual(new Set([204]))
  // Each kept request held several KB; a few hundred bytes a request is room for the test's own
  // allocations and for what Node and Vitest make meanwhile.
  expect(youngBytes() / REQUESTS).toBeLessThan(1000)
})
