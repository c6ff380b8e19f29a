import { defineConfig } from 'vitest/config'
import { chromiumAvailability } from './testkit/src/chromium.ts'
import { redisAvailability } from './testkit/src/redis-server.ts'
import { wasmModuleImports, webResolution } from './vitest.shared.ts'

// The `redis` project needs a real Redis. Without one it is left out, with one line that says so
// and how to run it; `pnpm test:redis` then fails instead of passing empty.
const redis = redisAvailability()
if (redis.via === undefined) console.warn(`\n  ${redis.message}\n`)
// The inspector's page in real Chromium: likewise left out, with one line, where none is installed;
// `pnpm test:browser` then fails.
const chromium = chromiumAvailability()
if (chromium.path === undefined) console.warn(`\n  ${chromium.message}\n`)

export default defineConfig({
  test: {
    projects: [
      'packages/*/vitest.config.ts',
      ...(redis.via === undefined ? ['!packages/redis/vitest.config.ts'] : []),
      ...(chromium.path === undefined ? [] : ['packages/inspect/vitest.browser.config.ts']),
      'test/vitest.config.ts',
      // The core once more on its Web build, so the default export condition is exercised too.
      {
        ...webResolution,
        plugins: [wasmModuleImports],
        test: { name: 'core-web', root: 'packages/core', include: ['test/**/*.test.ts'], env: { EXPECTED_CRYPTO: 'web' } },
      },
    ],
  },
})
