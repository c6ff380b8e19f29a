import { defineProject } from 'vitest/config'
import { sourceResolution } from '../../vitest.shared.ts'

export default defineProject({
  ...sourceResolution,
  test: {
    name: 'inspect',
    include: ['test/**/*.test.ts'],
    exclude: ['test/browser/**'],
    // The page is bundled into src/page/bundle.generated.ts first, as the package's build does.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 20_000,
  },
})
