import { beforeEach } from 'vitest'

/**
 * The suites that read the core's source text rather than run it. In the mutation run the
 * sources on disk are the instrumented copies, which hold every mutant at once behind switches:
 * such a suite sees the same text whichever mutant is active, so it can kill none, and it fails
 * on the instrumentation's own code. `pnpm test` runs them on the real sources.
 */
const SOURCE_TEXT_SUITES = [['every comparison of a secret', 'in the source of @hookguard/core']]

interface Named {
  name: string
  suite?: Named | undefined
}

function suitePath(task: Named): string[] {
  const names: string[] = []
  for (let suite = task.suite; suite; suite = suite.suite) if (suite.name) names.unshift(suite.name)
  return names
}

beforeEach((context) => {
  const path = suitePath(context.task)
  const readsSource = SOURCE_TEXT_SUITES.some((suite) => suite.every((name, i) => path[i] === name))
  if (readsSource) context.skip('reads the source text, which is instrumented under mutation')
})
