import { defineProject } from 'vitest/config'
import { sourceResolution } from '../vitest.shared.ts'

export default defineProject({
  ...sourceResolution,
  test: {
    name: 'conformance',
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    // The concurrent suites here (the connections' idle bound, the dedupe properties) wait on real
    // time rather than work: every adapter's cases wait at once, instead of five at a time.
    maxConcurrency: 40,
  },
})
