/**
 * Target 2: the Web build against the runtime's own `crypto.subtle.sign` with a cached key, over
 * the same bytes. Portable (no Node APIs, erasable TypeScript only): web.ts runs it on Node 24,
 * Bun and Deno with the Web build, web-worker.ts inside workerd with the edge build.
 */

import { allPayloads } from '@hookguard/testkit/payload'
import { type Candidate, measure, type PayloadResult } from './measure.ts'

/** The part of a core build the bench calls. */
export interface WebCore {
  sign(body: Uint8Array, secret: string): Promise<string>
  verifySignature(body: Uint8Array, header: string, secrets: string): Promise<boolean>
}

export interface WebBench {
  /** The build under test. */
  core: WebCore
  /** Another build, measured beside it in the same rounds (`--baseline`): before and after in one run. */
  baseline?: WebCore | undefined
  quick: boolean
  /**
   * Length of one timed batch. Inside workerd the clock ticks in whole milliseconds, so its
   * batches are longer than the default 25 ms to keep that within 2 %.
   */
  batchMs?: number
  log(line: string): void
}

const SECRET = 'hookguard-bench-secret-7d1e4c2b9a'

function verifying(name: string, core: WebCore): Candidate {
  return {
    name,
    async prepare({ bytes }) {
      const header = await core.sign(bytes, SECRET)
      return { async: true, call: () => core.verifySignature(bytes, header, SECRET) }
    },
  }
}

export async function benchWeb({ core, baseline, quick, batchMs = 25, log }: WebBench): Promise<PayloadResult[]> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const candidates: Candidate[] = [
    {
      name: 'floor',
      async prepare({ bytes }) {
        const data = bytes as Uint8Array<ArrayBuffer>
        return { async: true, call: () => crypto.subtle.sign('HMAC', key, data) }
      },
    },
    verifying('hookguard-web', core),
    ...(baseline === undefined ? [] : [verifying('hookguard-baseline', baseline)]),
  ]
  // Twice the micro benchmark's rounds: `subtle.sign` runs on a worker thread, so at 1 KiB and
  // 64 KiB its time is mostly the scheduling of that job, and single rounds swing by ±50 %.
  return measure(allPayloads(quick ? ['compact'] : ['compact', 'pretty', 'gson']), candidates, {
    rounds: quick ? 5 : 31,
    batchMs: quick ? Math.min(batchMs, 10) : batchMs,
    warmupMs: quick ? 30 : 250,
    floor: 'floor',
    log,
  })
}
