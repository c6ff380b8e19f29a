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
    // A bound against a hang, as in the packages' projects: the first test of a file that shares
    // its apps starts the framework's app, and beside a second whole suite one such test (Fastify's first,
    // in leaks.test.ts) ran past Vitest's 5 s.
    testTimeout: 20_000,
    // One worker runs several of these files in turn without loading every framework afresh for
    // each: they restore what they patch (the console, http.createServer) and reset the clocks they
    // share in beforeEach.
    isolate: false,
  },
})
