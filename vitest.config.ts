import { defineConfig } from 'vitest/config'
import { BaseSequencer, type TestSpecification } from 'vitest/node'
import { MODULE_REPLACING as CORE_MODULE_REPLACING } from './packages/core/vitest.config.ts'
import { MODULE_REPLACING as INSPECT_MODULE_REPLACING } from './packages/inspect/vitest.config.ts'
import { chromiumAvailability } from './testkit/src/chromium.ts'
import { redisAvailability } from './testkit/src/redis-server.ts'
import { sourceResolution, wasmModuleImports, webResolution } from './vitest.shared.ts'

// The `redis` and `bullmq` projects need a real Redis. Without one it is left out, with one line that says so
// and how to run it; `pnpm test:redis` then fails instead of passing empty.
const redis = redisAvailability()
if (redis.via === undefined) console.warn(`\n  ${redis.message}\n`)
// The inspector's page in real Chromium: likewise left out, with one line, where none is installed;
// `pnpm test:browser` then fails.
const chromium = chromiumAvailability()
if (chromium.path === undefined) console.warn(`\n  ${chromium.message}\n`)

/**
 * Files that take a worker for long (a browser, a Next.js build, a Redis Cluster's failover, timed
 * properties) start first. Vitest otherwise runs the projects in the order of their names, so these
 * came last and ran on alone while the other workers had nothing left to do. Files that mostly wait
 * (on Redis, a failover, real timeouts) alternate with files that mostly compute, so that a worker
 * waiting leaves its core to one computing: run together, the Redis files left half the machine idle
 * for twenty seconds.
 */
const LONG_FIRST = [
  'packages/inspect/test/browser/',
  'packages/fetch/test/nextjs.test.ts',
  'packages/redis/test/crash.test.ts',
  'test/robustness/complexity.test.ts',
  'packages/redis/test/cluster-failover.test.ts',
  'packages/inspect/test/export-scripts.property.test.ts',
  'packages/bullmq/test/faults.test.ts',
  'test/robustness/leaks.test.ts',
  'packages/redis/test/dedupe-property.test.ts',
  'packages/inspect/test/hostile-bodies.test.ts',
  'test/conformance/dedupe-property.test.ts',
  'packages/core/test/wasm-strip.test.ts',
  'packages/redis/test/dedupe-store.test.ts',
  'packages/bullmq/test/handoff.test.ts',
  'packages/redis/test/token-store.test.ts',
  'packages/redis/test/settle-retry.test.ts',
]

class LongFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (spec: TestSpecification) => {
      const at = LONG_FIRST.findIndex((path) => spec.moduleId.includes(`/${path}`))
      return at === -1 ? LONG_FIRST.length : at
    }
    // Array.prototype.sort is stable: the rest keep Vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b))
  }
}

export default defineConfig({
  test: {
    // Vitest's default on a two-core machine is one worker (cores - 1): every file would wait for the
    // one before it. Much of the suite's time is waiting on sockets, child processes and real
    // timeouts, not CPU, so four files run at once: with three, two files waiting together (the
    // Redis ones) left a core idle for seconds at a time, and four took 0.92x the wall time of
    // three for the same CPU time (two pairs of runs, side by side); the CPU-bound checks that judge speed do so by
    // the process's own CPU time (complexity.test.ts), which other workers do not disturb. The
    // adapters' and the conformance projects also set `isolate: false`: a fresh worker for each file
    // loaded every framework again, a fifth of the suite's CPU time. The projects whose tests run all
    // in the worker and judge nothing by the process's CPU time (the adapters', the client's, the
    // Workers store's) run in worker threads (`pool: 'threads'`), which start for less CPU than a
    // forked process: about a seventh of those projects' CPU time. A test that judges speed by
    // `process.cpuUsage()` stays in a forked process, where no other worker's CPU is counted.
    maxWorkers: 4,
    sequence: { sequencer: LongFirst },
    projects: [
      'packages/*/vitest.config.ts',
      ...(redis.via === undefined ? ['!packages/redis/vitest.config.ts', '!packages/bullmq/vitest.config.ts'] : []),
      {
        ...sourceResolution,
        test: {
          name: 'inspect-mocked',
          root: 'packages/inspect',
          include: INSPECT_MODULE_REPLACING,
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 20_000,
        },
      },
      // In the shared pool: a project limited to one file at a time is run after every other file, alone.
      ...(chromium.path === undefined
        ? []
        : [{ extends: './packages/inspect/vitest.browser.config.ts', root: 'packages/inspect', test: { fileParallelism: true } }]),
      'test/vitest.config.ts',
      // The core once more on its Web build, so the default export condition is exercised too.
      {
        ...webResolution,
        plugins: [wasmModuleImports],
        test: {
          name: 'core-web',
          root: 'packages/core',
          include: ['test/**/*.test.ts'],
          exclude: CORE_MODULE_REPLACING,
          isolate: false,
          env: { EXPECTED_CRYPTO: 'web' },
        },
      },
      // The core's files that replace one of its modules, each with the graph loaded afresh, on both builds.
      {
        ...sourceResolution,
        plugins: [wasmModuleImports],
        test: { name: 'core-mocked', root: 'packages/core', include: CORE_MODULE_REPLACING, env: { EXPECTED_CRYPTO: 'node' } },
      },
      {
        ...webResolution,
        plugins: [wasmModuleImports],
        test: { name: 'core-web-mocked', root: 'packages/core', include: CORE_MODULE_REPLACING, env: { EXPECTED_CRYPTO: 'web' } },
      },
    ],
  },
})
