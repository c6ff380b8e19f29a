import { configDefaults, defineProject } from 'vitest/config'
import { hasRedisServer } from '../../testkit/src/redis-server.ts'
import { sourceResolution } from '../../vitest.shared.ts'

// Every file here runs real BullMQ queues and workers on a real Redis: the root config leaves this
// project out when none is available. The fault tests stop, kill and restart their own servers, so
// with only REDIS_URL (a server they must not stop) they are left out, and say so.
const faultTests = hasRedisServer()
if (!faultTests) console.warn('\n  BullMQ fault tests not run: they start their own redis-server, which is not on PATH.\n')

export default defineProject({
  ...sourceResolution,
  test: {
    name: 'bullmq',
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...(faultTests ? [] : ['test/faults.test.ts'])],
    testTimeout: 30_000,
    hookTimeout: 20_000,
  },
})
