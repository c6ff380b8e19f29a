/**
 * Target 2: the Web build (Web Crypto) against the runtime's own `crypto.subtle.sign` with a
 * cached key, over the same bytes. Runs unchanged on Node 24, Bun and Deno (and on Node 20 through
 * tsx); started by run.ts, or alone, e.g. `bun bench/web.ts [--quick]`.
 *
 * It imports the built Web entry by path: on Node the package's `node` condition would pick the
 * node:crypto build, and the Web build is what Bun, Deno and Workers users get.
 */

import { allPayloads } from '@hookguard/testkit/payload'
import { type Candidate, measure, RESULT_PREFIX } from './measure.ts'

interface WebCore {
  sign(body: Uint8Array, secret: string): Promise<string>
  verifySignature(body: Uint8Array, header: string, secrets: string): Promise<boolean>
}

const SECRET = 'hookguard-bench-secret-7d1e4c2b9a'
// A variable specifier keeps TypeScript from resolving the untyped build file.
const entry = new URL('../packages/core/dist/web/index.js', import.meta.url).href
const core = (await import(entry)) as WebCore

const g = globalThis as {
  Deno?: { args: string[]; version: { deno: string } }
  Bun?: { version: string }
  process?: { argv: string[]; version: string }
}
const args = g.Deno?.args ?? g.process?.argv ?? []
const quick = args.includes('--quick')
const runtime = g.Deno ? `deno ${g.Deno.version.deno}` : g.Bun ? `bun ${g.Bun.version}` : `node ${g.process?.version}`

const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])

const candidates: Candidate[] = [
  {
    name: 'floor',
    async prepare({ bytes }) {
      const data = bytes as Uint8Array<ArrayBuffer>
      return { async: true, call: () => crypto.subtle.sign('HMAC', key, data) }
    },
  },
  {
    name: 'hookguard-web',
    async prepare({ bytes }) {
      const header = await core.sign(bytes, SECRET)
      return { async: true, call: () => core.verifySignature(bytes, header, SECRET) }
    },
  },
]

// Twice the micro benchmark's rounds: `subtle.sign` runs on a worker thread, so at 1 KiB and
// 64 KiB its time is mostly the scheduling of that job, and single rounds swing by ±50 %.
const results = await measure(allPayloads(quick ? ['compact'] : ['compact', 'pretty', 'gson']), candidates, {
  rounds: quick ? 5 : 31,
  batchMs: quick ? 4 : 25,
  warmupMs: quick ? 30 : 250,
  floor: 'floor',
  log: (line) => console.error(`web (${runtime}): ${line}`),
})
console.log(RESULT_PREFIX + JSON.stringify({ runtime, results }))
