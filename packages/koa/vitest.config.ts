import { defineProject } from 'vitest/config'
import { sourceResolution } from '../../vitest.shared.ts'

export default defineProject({
  ...sourceResolution,
  // One worker runs several of these files in turn without loading the frameworks afresh for each:
  // they leave no state behind (the root config says why this matters).
  test: { name: 'koa', include: ['test/**/*.test.ts'], isolate: false, pool: 'threads' },
})
