import type { Reporter, TestModule, Vitest } from 'vitest/node'

/**
 * A vitest reporter for the mutation run (`vitest.mutation.config.ts`): Stryker's initial test
 * run fails when a test file failed to load, naming the file and its error.
 *
 * Stryker's vitest runner counts only the tests it saw complete. A test file whose imports throw
 * while loading has none, so the initial run "succeeds" with that file's tests missing, every
 * mutant they would have reached is reported as covered by no test, and the score is silently
 * wrong. That happened once: Stryker's instrumented copy of a labelled loop was a syntax error,
 * and 34 of the 58 test files were gone from the run.
 *
 * In a mutant's run a file that fails to load is the mutant being detected (say, a table built
 * wrong at module level), so only the initial run, and a plain `vitest run`, are checked.
 */
export class LoadFailuresReporter implements Reporter {
  private vitest: Vitest | undefined

  onInit(vitest: Vitest): void {
    this.vitest = vitest
  }

  onTestRunEnd(modules: readonly TestModule[]): void {
    const vitest = this.vitest
    if (vitest === undefined) return
    // Stryker's runner provides `mode`: 'dry-run' for the initial run, 'mutant' for each mutant.
    const { mode } = vitest.getProvidedContext() as { mode?: unknown }
    if (mode === 'mutant') return
    const failures = loadFailures(modules)
    if (failures.length === 0) return
    const error = new Error(`${failures.length} test file(s) failed to load, so none of their tests ran:\n${failures.join('\n')}`)
    // An error outside any test: Stryker's runner stops the initial run with it.
    vitest.state.catchError(error, 'Test file failed to load')
  }
}

/** Each test file that holds no test and failed, with its first error: `project file: message`. */
export function loadFailures(modules: readonly TestModule[]): string[] {
  return modules.flatMap((module) => {
    const [first] = module.errors()
    if (first === undefined || module.children.size > 0) return []
    const where = `${module.project.name ? `${module.project.name} ` : ''}${module.relativeModuleId}`
    return [`  ${where}: ${first.name}: ${first.message}`]
  })
}
