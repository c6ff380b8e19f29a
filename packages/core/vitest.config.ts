import { defineProject } from 'vitest/config'
import { sourceResolution } from '../../vitest.shared.ts'

export default defineProject({
  ...sourceResolution,
  test: { name: 'core', include: ['test/**/*.test.ts'], env: { EXPECTED_CRYPTO: 'node' } },
})
