import { settledRatio } from '@hookguard/testkit/growth'
import { HOSTILE_SHAPES, hostileShape } from '@hookguard/testkit/hostile'
import { describe, expect, it } from 'vitest'
import { createDiagnosisBudget } from '../src/diagnosis-budget.ts'
import { diffRecords } from '../src/diff.ts'
import { type ExportFormat, exportAs } from '../src/export.ts'
import { createJudge } from '../src/judge.ts'
import { checkOptions } from '../src/options.ts'
import type { InspectedRecord } from '../src/record.ts'
import { detail } from '../src/view.ts'
import { recordOf, SECRET } from './helpers.ts'

// What the inspector does with a body, whatever the body holds: the work a sender sets off (the
// verdict, and the diagnosis of a refused delivery, every variant tried) and the work the same
// body sets off when the developer opens its record (the detail, a diff, each export). For each
// shape of testkit/src/hostile.ts, timed in this process by its CPU time, interleaved, medians of
// rounds (as the core's cost sweep in test/robustness/complexity.test.ts):
// - it grows no faster than the body: 64 KiB against just over 16 KiB, linear work reads about
//   4×, quadratic 16×;
// - it costs no more than a small multiple of what an ordinary delivery of the same size costs:
//   a body the sender shapes (JSON a thousand deep, small values by the thousand) must not buy
//   more of the inspector than its bytes do. The inspector's baseline is its own ordinary work,
//   tens of HMACs (the variants), not the receiver's one HMAC.
// What a flood of refused deliveries costs in all is bounded apart (diagnosis-budget.test.ts);
// here the budget never runs out, so that every diagnosis is timed whole.

const SMALL = 16 * 1024 + 1
const LARGE = 64 * 1024
const GROWTH_LIMIT = 8
/** Over an ordinary compact delivery of the same size; the dearest shapes read 2×. */
const REFERENCE_LIMIT = 8
const TIMING = { rounds: 3, batchMs: 5, budgetMs: 4000 }
const FORMATS: readonly ExportFormat[] = ['send', 'curl', 'har', 'fixture', 'fixture-test']
const CONTEXT = { url: 'http://127.0.0.1:4319' }
const HEADERS: [string, string][] = [
  ['Content-Type', 'application/json'],
  ['X-Service-Hmac-Signature', 'ab'.repeat(32)],
]

const judge = createJudge(checkOptions({ auth: { mode: 'secret', secret: SECRET } }), true, createDiagnosisBudget({ burstMs: Infinity }))

const request = (body: Uint8Array) => ({
  method: 'POST',
  url: '/hooks',
  rawHeaders: HEADERS.flat(),
  body,
  truncated: false,
})

async function judged(body: Uint8Array): Promise<InspectedRecord> {
  const judgement = await judge.delivery(request(body))
  return recordOf(body, HEADERS, {
    id: 2,
    url: '/hooks',
    verdict: judgement.verdict,
    status: judgement.response.status,
    ...(judgement.code !== undefined && { code: judgement.code }),
    ...(judgement.diagnosis !== undefined && { diagnosis: judgement.diagnosis }),
  })
}

interface Work {
  name: string
  /** One call for `body`, made afresh for each (building what it needs is not timed). */
  call(body: Uint8Array): Promise<() => Promise<unknown>>
}

const WORK: readonly Work[] = [
  {
    name: 'a refused delivery, judged and its diagnosis made',
    call: async (body) => async () => {
      const judgement = await judge.delivery(request(body))
      if (judgement.verdict !== 'refused' || judgement.diagnosis?.outcome !== 'no_match') throw new Error('not diagnosed as refused')
    },
  },
  {
    name: 'its record opened: the detail, a diff with the delivery before, each export',
    call: async (body) => {
      const [record, before] = await Promise.all([judged(body), judged(hostileShape('compact').build(body.byteLength))])
      return async () => {
        detail(record)
        diffRecords({ ...before, id: 1 }, record)
        for (const format of FORMATS) exportAs(format, record, CONTEXT)
      }
    },
  },
]

const figures = ({ aMs, bMs, ratio }: { aMs: number; bMs: number; ratio: number }) =>
  `${aMs.toFixed(3)} ms, then ${bMs.toFixed(3)} ms: ×${ratio.toFixed(1)}`

describe('what the inspector does with a body grows with the body, and costs what an ordinary one does', () => {
  for (const work of WORK) {
    describe(work.name, () => {
      for (const shape of HOSTILE_SHAPES) {
        it(shape.label, async () => {
          const small = await work.call(shape.build(SMALL))
          const large = await work.call(shape.build(LARGE))
          const growth = await settledRatio(small, large, GROWTH_LIMIT, TIMING)
          expect(growth.ratio, `${figures(growth)}: ${SMALL} bytes, then ${LARGE}`).toBeLessThan(GROWTH_LIMIT)
          const ordinary = await work.call(hostileShape('compact').build(LARGE))
          const over = await settledRatio(ordinary, large, REFERENCE_LIMIT, TIMING)
          expect(over.ratio, `${figures(over)}: an ordinary delivery, then this one, ${LARGE} bytes`).toBeLessThan(REFERENCE_LIMIT)
        }, 60_000)
      }
    })
  }
})
