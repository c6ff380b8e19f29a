import { defineConfig } from 'vitest/config'
import { webResolution } from './vitest.shared.ts'

export default defineConfig({
  test: {
    projects: [
      'packages/*/vitest.config.ts',
      'test/vitest.config.ts',
      // The core once more on its Web build, so the default export condition is exercised too.
      {
        ...webResolution,
        test: { name: 'core-web', root: 'packages/core', include: ['test/**/*.test.ts'], env: { EXPECTED_CRYPTO: 'web' } },
      },
    ],
  },
})
