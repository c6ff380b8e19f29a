import { defineProject } from 'vitest/config'
import { sourceResolution } from '../../vitest.shared.ts'

export default defineProject({
  ...sourceResolution,
  test: { name: 'fetch', include: ['test/**/*.test.ts'], isolate: false },
})
