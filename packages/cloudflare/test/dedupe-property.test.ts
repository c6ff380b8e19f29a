import fc from 'fast-check'
import { afterAll, beforeAll, describe, it, vi } from 'vitest'
import { factories } from '../../../test/support/apps.ts'
import { play, scheduleArb, scheduleRuns } from '../../../test/support/dedupe-schedule.ts'
import { durableObjectDedupeStore } from '../src/store.ts'
import { fakeNamespace } from './fake-namespace.ts'

// "Each delivery once" with this store: the property of test/conformance/dedupe-property.test.ts
// (its invariants are in test/support/dedupe-schedule.ts), over the two adapters a Worker uses,
// Hono and the fetch handler, with the store over an in-process namespace that runs the object's
// claim rules. The object itself, in workerd: runtimes/dedupe-workerd.ts.

const SEED = 20_261_129
const ADAPTERS = ['Hono (@hono/node-server)', 'Fetch handler (@hono/node-server)']

// Handlers that throw, and the core reporting claims it cannot settle: expected here, and quiet.
beforeAll(() => {
  vi.spyOn(console, 'error').mockImplementation(() => {})
})
afterAll(() => {
  vi.restoreAllMocks()
})

const adapters = factories.filter((factory) => ADAPTERS.includes(factory.name))

describe.concurrent.each(adapters)('$name, with the Durable Object dedupe store', (factory) => {
  const store = () => durableObjectDedupeStore(fakeNamespace().namespace, { shards: 4 })

  it('handles each delivery once, whatever the senders, the handler and the store do', async () => {
    await fc.assert(
      fc.asyncProperty(scheduleArb(), (schedule) => play(factory, schedule, { processingTtl: 1, store: store() })),
      scheduleRuns(10, SEED),
    )
  }, 60_000)

  it('runs a delivery again only after a run outlived processingTtl', async () => {
    await fc.assert(
      fc.asyncProperty(scheduleArb({ slowMs: [900, 1_400] }), (schedule) => play(factory, schedule, { processingTtl: 1, store: store() })),
      scheduleRuns(5, SEED + 1),
    )
  }, 60_000)
})
