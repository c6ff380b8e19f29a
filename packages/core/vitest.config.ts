import { defineProject } from 'vitest/config'
import { sourceResolution, wasmModuleImports } from '../../vitest.shared.ts'

/**
 * Files that replace one of the core's modules (`vi.mock`) to watch every call of it: the module
 * graph has to be loaded afresh for them, so they run in projects of their own, isolated. Every
 * other file of the core shares one graph per worker (`isolate: false`): loading the core again
 * for each of its fifty files was a third of the project's time.
 */
export const MODULE_REPLACING = ['test/single-comparison.test.ts', 'test/token-endpoint.test.ts']

export default defineProject({
  ...sourceResolution,
  plugins: [wasmModuleImports],
  test: { name: 'core', include: ['test/**/*.test.ts'], exclude: MODULE_REPLACING, isolate: false, env: { EXPECTED_CRYPTO: 'node' } },
})
