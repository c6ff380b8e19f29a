import { startRedisCluster } from '@hookguard/testkit/redis-cluster'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    /** A node of the Redis Cluster the store suites share (they discover the rest from it). */
    redisClusterUrl: string
  }
}

// One Redis Cluster for every file of the project: the store suites run their cluster clients
// against it, each under key prefixes of its own. The failover test starts its own, as it kills a
// master. Started once here, since six servers and their joining cost a few seconds.
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startRedisCluster()
  project.provide('redisClusterUrl', cluster.url)
  return () => cluster.stop()
}
