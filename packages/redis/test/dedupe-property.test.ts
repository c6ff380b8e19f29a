import { type RedisServer, startRedis } from '@hookguard/testkit/redis-server'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, it, vi } from 'vitest'
import { factories } from '../../../test/support/apps.ts'
import { play, scheduleArb, scheduleRuns } from '../../../test/support/dedupe-schedule.ts'
import { redisDedupeStore } from '../src/index.ts'
import { type Connected, flavours, uniquePrefix } from './clients.ts'

// "Each delivery once" with the Redis store over a real redis-server: the property of
// test/conformance/dedupe-property.test.ts (its invariants are in test/support/dedupe-schedule.ts),
// over two adapters, one that settles by the answer written to the socket (Express) and one that
// settles before it answers (Hono), each run under a key prefix of its own.

/** Real time: handlers take up to 1.4 s. About 12 s on an idle machine; every adapter plays at once, so a loaded one needs far more. */
const PROPERTY_TIMEOUT_MS = 180_000
const SEED = 20_261_128
const ADAPTERS = ['Express 5', 'Hono (@hono/node-server)']

let server: RedisServer
let connected: Connected
beforeAll(async () => {
  server = await startRedis()
  const [flavour] = flavours
  if (flavour === undefined) throw new Error('no Redis client to test with')
  connected = await flavour.connect(server.url)
  // Handlers that throw, and the core reporting claims it cannot settle: expected here, and quiet.
  vi.spyOn(console, 'error').mockImplementation(() => {})
})
afterAll(async () => {
  vi.restoreAllMocks()
  await connected?.close()
  await server?.stop().catch(() => {})
})

const adapters = factories.filter((factory) => ADAPTERS.includes(factory.name))

describe.concurrent.each(adapters)('$name, with the Redis dedupe store', (factory) => {
  const store = () => redisDedupeStore(connected.client, { prefix: uniquePrefix() })

  it(
    'handles each delivery once, whatever the senders, the handler and the store do',
    async () => {
      await fc.assert(
        fc.asyncProperty(scheduleArb(), (schedule) => play(factory, schedule, { processingTtl: 1, store: store() })),
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
          play(factory, schedule, { processingTtl: 1, store: store() }),
        ),
        scheduleRuns(5, SEED + 1),
      )
    },
    PROPERTY_TIMEOUT_MS,
  )
})
