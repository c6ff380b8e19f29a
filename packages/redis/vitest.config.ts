import { configDefaults, defineProject } from 'vitest/config'
import { hasRedisServer } from '../../testkit/src/redis-server.ts'
import { sourceResolution } from '../../vitest.shared.ts'

// Every file here talks to a real Redis: the root config leaves this project out when none is
// available, and `pnpm test:redis` runs it alone. The crash tests stop and restart their server,
// so with only REDIS_URL (a server they must not stop) they are left out, and say so.
const crashTests = hasRedisServer()
if (!crashTests) console.warn('\n  Redis crash tests not run: they start their own redis-server, which is not on PATH.\n')

export default defineProject({
  ...sourceResolution,
  test: {
    name: 'redis',
    include: ['test/**/*.test.ts'],
    exclude: crashTests ? configDefaults.exclude : [...configDefaults.exclude, 'test/crash.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
})
