import { defineProject } from 'vitest/config'
import { sourceResolution } from '../../vitest.shared.ts'

// Real Chromium (Debian's /usr/bin/chromium, or CHROMIUM_PATH) driven by playwright-core. The root
// config leaves this project out, with one warning line, where no Chromium is found;
// `pnpm test:browser` runs it and fails instead.
export default defineProject({
  ...sourceResolution,
  test: {
    name: 'inspect-browser',
    include: ['test/browser/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One browser at a time: the machine's two cores are shared.
    fileParallelism: false,
  },
})
