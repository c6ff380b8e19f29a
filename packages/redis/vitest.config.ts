import { configDefaults, defineProject } from 'vitest/config'
import { hasRedisCluster } from '../../testkit/src/redis-cluster.ts'
import { hasRedisServer } from '../../testkit/src/redis-server.ts'
import { sourceResolution } from '../../vitest.shared.ts'

// Every file here talks to a real Redis: the root config leaves this project out when none is
// available, and `pnpm test:redis` runs it alone. The crash tests stop and restart their server,
// so with only REDIS_URL (a server they must not stop) they are left out, and say so.
const crashTests = hasRedisServer()
if (!crashTests) console.warn('\n  Redis crash tests not run: they start their own redis-server, which is not on PATH.\n')
// The Redis Cluster tests start their own cluster (six redis-server processes joined by
// redis-cli), once for the project in test/cluster-setup.ts and once more for the failover test.
const clusterTests = hasRedisCluster()
if (!clusterTests) console.warn('\n  Redis Cluster tests not run: they start their own cluster, with redis-server and redis-cli.\n')
const leftOut = [...(crashTests ? [] : ['test/crash.test.ts']), ...(clusterTests ? [] : ['test/cluster-failover.test.ts'])]

export default defineProject({
  ...sourceResolution,
  test: {
    name: 'redis',
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...leftOut],
    globalSetup: clusterTests ? ['test/cluster-setup.ts'] : [],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // One worker runs several of these files in turn without loading the Redis clients afresh for
    // each: every file closes the clients and servers it starts.
    isolate: false,
  },
})
