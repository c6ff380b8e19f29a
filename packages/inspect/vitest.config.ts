import { defineProject } from 'vitest/config'
import { sourceResolution } from '../../vitest.shared.ts'

/**
 * Files that replace one of the inspector's modules (`vi.mock`) to make a step fail: they run in a
 * project of their own, isolated, with the module graph loaded afresh. The others share one graph
 * per worker (`isolate: false`): they leave no state behind, and loading the inspector again for
 * each file was a fifth of the project's CPU time.
 */
export const MODULE_REPLACING = ['test/failing-steps.test.ts']

export default defineProject({
  ...sourceResolution,
  test: {
    name: 'inspect',
    include: ['test/**/*.test.ts'],
    exclude: ['test/browser/**', ...MODULE_REPLACING],
    // The page is bundled into src/page/bundle.generated.ts first, as the package's build does.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 20_000,
    isolate: false,
  },
})
