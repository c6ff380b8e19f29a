import { defineProject } from 'vitest/config'
import { sourceResolution, wasmModuleImports } from '../../vitest.shared.ts'

export default defineProject({
  ...sourceResolution,
  plugins: [wasmModuleImports],
  test: { name: 'core', include: ['test/**/*.test.ts'], env: { EXPECTED_CRYPTO: 'node' } },
})
