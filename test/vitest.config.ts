import { defineProject } from 'vitest/config'
import { sourceResolution } from '../vitest.shared.ts'

export default defineProject({
  ...sourceResolution,
  test: { name: 'conformance', include: ['**/*.test.ts'], exclude: ['**/node_modules/**'] },
})
