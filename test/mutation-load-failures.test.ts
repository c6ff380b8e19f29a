import { describe, expect, it } from 'vitest'
import type { TestModule, Vitest } from 'vitest/node'
import { LoadFailuresReporter, loadFailures } from '../scripts/lib/load-failures-reporter.ts'

/** A test module as vitest reports it: its errors, and how many tests and suites it holds. */
function testModule(file: string, errors: { name: string; message: string }[], tests: number): TestModule {
  return {
    relativeModuleId: file,
    project: { name: 'core' },
    errors: () => errors,
    children: { size: tests },
  } as unknown as TestModule
}

/** A vitest instance with the mode Stryker's runner provides, recording the errors caught. */
function vitestIn(mode: string | undefined) {
  const caught: { error: Error; type: string }[] = []
  const vitest = {
    getProvidedContext: () => (mode === undefined ? {} : { mode }),
    state: { catchError: (error: Error, type: string) => caught.push({ error, type }) },
  } as unknown as Vitest
  return { vitest, caught }
}

const syntaxError = { name: 'SyntaxError', message: "Illegal continue statement: 'value' does not denote an iteration statement" }
const loaded = testModule('test/basic.test.ts', [], 17)
const broken = testModule('test/receiver.test.ts', [syntaxError], 0)

describe('the mutation run’s load-failures reporter', () => {
  it('fails the initial run when a test file did not load, naming the file and its error', () => {
    const { vitest, caught } = vitestIn('dry-run')
    const reporter = new LoadFailuresReporter()
    reporter.onInit(vitest)
    reporter.onTestRunEnd([loaded, broken])
    expect(caught).toHaveLength(1)
    expect(caught[0]?.error.message).toContain('core test/receiver.test.ts: SyntaxError: Illegal continue statement')
    expect(caught[0]?.error.message).not.toContain('basic.test.ts')
  })

  it('fails a plain vitest run of the mutation config likewise', () => {
    const { vitest, caught } = vitestIn(undefined)
    const reporter = new LoadFailuresReporter()
    reporter.onInit(vitest)
    reporter.onTestRunEnd([broken])
    expect(caught).toHaveLength(1)
  })

  it('leaves a mutant’s run alone: a file that fails to load there is the mutant detected', () => {
    const { vitest, caught } = vitestIn('mutant')
    const reporter = new LoadFailuresReporter()
    reporter.onInit(vitest)
    reporter.onTestRunEnd([broken])
    expect(caught).toHaveLength(0)
  })

  it('says nothing when every file loaded, though a test in one failed', () => {
    const failedTest = testModule('test/token.test.ts', [], 22)
    expect(loadFailures([loaded, failedTest])).toEqual([])
    // A file with tests and an error (an error in a hook, say) loaded: its tests report themselves.
    expect(loadFailures([testModule('test/events.test.ts', [syntaxError], 3)])).toEqual([])
  })
})
