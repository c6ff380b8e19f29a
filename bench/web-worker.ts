/**
 * Target 2 inside workerd: web-suite.ts in a Worker, bundled as wrangler bundles one (the Worker
 * conditions, so the core's edge build, with strip.wasm linked in as a compiled module) and run
 * by web-workerd.ts through miniflare, without `nodejs_compat`.
 */

import * as core from '@hookguard/core'
import { whitespaceStripper } from '@hookguard/core/adapter'
// @ts-expect-error: web-workerd.ts makes this module when it bundles: another build's index.js (`--baseline`), or nothing.
import * as baselineBuild from 'hookguard-bench-baseline'
import type { PayloadResult } from './measure.ts'
import { benchWeb, type WebCore } from './web-suite.ts'

export interface WorkerdRun {
  stripper: string
  results: PayloadResult[]
  log: string[]
}

const baseline = (baselineBuild as Partial<WebCore>).verifySignature === undefined ? undefined : (baselineBuild as WebCore)

export default {
  async fetch(request: Request): Promise<Response> {
    const quick = new URL(request.url).searchParams.has('quick')
    const log: string[] = []
    // The clock of a Worker ticks in whole milliseconds: batches of 50 ms keep that within 2 %.
    const results = await benchWeb({ core, baseline, quick, batchMs: 50, log: (line) => log.push(line) })
    const run: WorkerdRun = { stripper: whitespaceStripper(), results, log }
    return Response.json(run)
  },
}
