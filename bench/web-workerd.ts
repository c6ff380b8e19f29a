/**
 * Target 2 inside workerd: bundles web-worker.ts as wrangler would (runtimes/bundle.ts: the Worker
 * conditions, the core's edge build, strip.wasm as a compiled module) and runs it through
 * miniflare without `nodejs_compat`. Needs Node 22 or later (miniflare); run.ts starts it with
 * the Node 24 of runtimes/, which strips this file's types itself:
 * `runtimes/node_modules/node24/bin/node bench/web-workerd.ts [--quick] [--baseline=<folder>]`.
 */

import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Miniflare } from 'miniflare'
import { bundleWorker, type Plugin, workerModules } from '../runtimes/bundle.ts'
import { RESULT_PREFIX } from './measure.ts'
import type { WorkerdRun } from './web-worker.ts'

const here = path.dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const quick = args.includes('--quick')
const baselineDir = args.find((arg) => arg.startsWith('--baseline='))?.slice('--baseline='.length)

/** `hookguard-bench-baseline`: the `--baseline` build's index.js, or a module with nothing in it. */
const baselinePlugin: Plugin = {
  name: 'bench-baseline',
  setup(build) {
    build.onResolve({ filter: /^hookguard-bench-baseline$/ }, () =>
      baselineDir === undefined ? { path: 'none', namespace: 'bench-baseline' } : { path: path.resolve(baselineDir, 'index.js') },
    )
    build.onLoad({ filter: /.*/, namespace: 'bench-baseline' }, () => ({ contents: 'export {}', loader: 'js' }))
  },
}

const out = await mkdtemp(path.join(tmpdir(), 'hookguard-bench-workerd-'))
try {
  const outfile = await bundleWorker(out, path.join(here, 'web-worker.ts'), [baselinePlugin])

  const miniflareVersion = (
    JSON.parse(await readFile(path.join(here, 'node_modules/miniflare/package.json'), 'utf8')) as { version: string }
  ).version
  const mf = new Miniflare({
    modules: await workerModules(outfile),
    compatibilityDate: '2026-07-01',
    // No `nodejs_compat`, as a user's Worker needs none.
    compatibilityFlags: [],
  })
  try {
    const res = await mf.dispatchFetch(`http://bench.test/${quick ? '?quick' : ''}`)
    const text = await res.text()
    if (!res.ok) throw new Error(`web-workerd: the Worker answered ${res.status}: ${text.slice(0, 2000)}`)
    const run = JSON.parse(text) as WorkerdRun
    const runtime = `workerd (miniflare ${miniflareVersion})`
    for (const line of run.log) console.error(`web (${runtime}): ${line}`)
    // The edge build must strip with the kernel it imports: a JavaScript fallback here is a failure, not a figure.
    if (run.stripper !== 'wasm-import') throw new Error(`web-workerd: the Worker stripped with ${run.stripper}, not the imported kernel`)
    console.log(RESULT_PREFIX + JSON.stringify({ runtime, stripper: run.stripper, results: run.results }))
  } finally {
    await mf.dispose()
  }
} finally {
  await rm(out, { recursive: true, force: true })
}
