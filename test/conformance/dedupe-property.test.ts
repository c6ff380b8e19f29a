import { type DedupeStore, memoryDedupeStore } from '@hookguard/core'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { factories } from '../support/apps.ts'
import { check, play, type Run, type Schedule, scheduleArb, scheduleRuns } from '../support/dedupe-schedule.ts'

// "Each delivery once", generalised from dedupe-disconnect.test.ts: fast-check draws a few
// deliveries, each with sender attempts (waiting for the answer or dropping the connection), handler
// runs that succeed, refuse, throw or take long, and a store that rejects or stalls on some calls;
// every adapter on a socket plays it with the in-memory store. The invariants, per delivery, are in
// test/support/dedupe-schedule.ts: no overlapping runs (but after processingTtl), no run after a
// success (but when the store could not record it), a patient sender gets it handled, and no
// waiting sender is left without an answer. The same property with Redis: packages/redis/test.

const serverFactories = factories.filter((factory) => factory.inProcess !== true)
/** Real time: handlers take up to 1.4 s. About 12 s on an idle machine; every adapter plays at once, so a loaded one needs far more. */
const PROPERTY_TIMEOUT_MS = 180_000
const SEED = 20_261_127

// Handlers that throw, and the core reporting claims it cannot settle: expected here, and quiet.
beforeAll(() => {
  vi.spyOn(console, 'error').mockImplementation(() => {})
})
afterAll(() => {
  vi.restoreAllMocks()
})

describe.concurrent.each(serverFactories)('$name, with the in-memory dedupe store', (factory) => {
  it(
    'handles each delivery once, whatever the senders, the handler and the store do',
    async () => {
      await fc.assert(
        fc.asyncProperty(scheduleArb(), (schedule) => play(factory, schedule, { processingTtl: 1, store: memoryDedupeStore() })),
        scheduleRuns(10, SEED),
      )
    },
    PROPERTY_TIMEOUT_MS,
  )

  it(
    'runs a delivery again only after a run outlived processingTtl',
    async () => {
      await fc.assert(
        fc.asyncProperty(scheduleArb({ slowMs: [900, 1_400] }), (schedule) =>
          play(factory, schedule, { processingTtl: 1, store: memoryDedupeStore() }),
        ),
        scheduleRuns(5, SEED + 1),
      )
    },
    PROPERTY_TIMEOUT_MS,
  )
})

describe('the invariants', () => {
  // A store that claims every time, as one that lost its keys would: the second attempt, sent while
  // the first run still goes on, runs too, long before processingTtl.
  const forgetful: DedupeStore = {
    claim: async () => ({ state: 'claimed', claim: { complete: async () => {}, release: async () => {} } }),
  }
  const overlapping: Schedule = {
    deliveries: [
      {
        attempts: [
          { gapMs: 0, dropAfterMs: 100 },
          { gapMs: 0, dropAfterMs: undefined },
        ],
        outcomes: [
          { kind: 'answer', status: 200, ms: 600 },
          { kind: 'answer', status: 200, ms: 0 },
        ],
        faults: [],
      },
    ],
  }

  it('find two runs at once of a delivery whose claim still holds', async () => {
    const factory = serverFactories[0] as (typeof serverFactories)[number]
    await expect(play(factory, overlapping, { processingTtl: 1, store: forgetful })).rejects.toThrow(
      'two runs overlap within processingTtl',
    )
    // The same schedule over a store that holds its claims passes.
    await play(factory, overlapping, { processingTtl: 1, store: memoryDedupeStore() })
  })

  // The timeline of a run that failed in CI's runtimes step: the store granted the retry's claim when its
  // whole-millisecond clock read processingTtl after the first, which by ours was a fraction short.
  const retried = (secondClaimAfterMs: number): Run[] => [
    { start: 0, claimSent: 0, end: 1_268, answered: 'threw' },
    { start: secondClaimAfterMs, claimSent: secondClaimAfterMs, end: secondClaimAfterMs + 1_129, answered: 200 },
  ]
  const judge = (runs: Run[]) => () =>
    check(0, { runs, replies: [{ status: 200, retryAfter: undefined }], log: { completeFailed: false } }, 1)

  it("allow a retry's run once the store's clock reads processingTtl, a tick short of it by ours", () => {
    expect(judge(retried(999.4))).not.toThrow()
  })

  it('find a retry run before processingTtl', () => {
    expect(judge(retried(990))).toThrow('two runs overlap within processingTtl')
  })
})
