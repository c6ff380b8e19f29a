/**
 * Target 2 on Node 24, Bun and Deno (and on Node 20 through tsx): the Web build against the
 * runtime's own `crypto.subtle.sign` (web-suite.ts). Started by run.ts, or alone, e.g.
 * `bun bench/web.ts [--quick] [--baseline=<folder of another Web build>]`; web-workerd.ts runs the
 * same inside workerd.
 *
 * It imports the built Web entry by path: on Node the package's `node` condition would pick the
 * node:crypto build, and the Web build is what a bundler for the `worker` or `browser` condition gives.
 */

import { RESULT_PREFIX } from './measure.ts'
import { benchWeb, type WebCore } from './web-suite.ts'

// A variable specifier keeps TypeScript from resolving the untyped build files.
const build = new URL('../packages/core/dist/web/', import.meta.url)
const core = (await import(new URL('index.js', build).href)) as WebCore
const { whitespaceStripper } = (await import(new URL('adapter.js', build).href)) as { whitespaceStripper(): string }

const g = globalThis as {
  Deno?: { args: string[]; version: { deno: string } }
  Bun?: { version: string }
  process?: { argv: string[]; version: string }
}
const args = g.Deno?.args ?? g.process?.argv ?? []
const quick = args.includes('--quick')
const baselineDir = args.find((arg) => arg.startsWith('--baseline='))?.slice('--baseline='.length)
const runtime = g.Deno ? `deno ${g.Deno.version.deno}` : g.Bun ? `bun ${g.Bun.version}` : `node ${g.process?.version}`
const log = (line: string) => console.error(`web (${runtime}): ${line}`)

// An absolute path (run.ts resolves it).
const baseline = baselineDir === undefined ? undefined : ((await import(`file://${baselineDir.replace(/\/$/, '')}/index.js`)) as WebCore)

const stripper = whitespaceStripper()
const results = await benchWeb({ core, baseline, quick, log })
console.log(RESULT_PREFIX + JSON.stringify({ runtime, stripper, results }))
