/**
 * Mutation testing of the core: `pnpm test:mutation` (Stryker, then `scripts/mutation-score.ts`,
 * which prints the score over the security-relevant files and lists their survivors).
 *
 * Every mutant is tested against the core's tests on both builds, the `core` (Node) and `core-web`
 * (Web Crypto) projects of `vitest.mutation.config.ts`: a mutant is killed when either build's
 * tests fail. Reports go to `reports/mutation/` (git-ignored): `index.html`, `mutation.json`, and
 * the incremental file, so a re-run tests only the mutants whose code or covering tests changed
 * (`pnpm exec stryker run --force` re-tests them all).
 *
 * A full run takes about 50 minutes on two cores, half of it for the static mutants (module-level
 * code, such as tables and regular expressions), each of which reloads and runs every test.
 * `pnpm exec stryker run --ignoreStatic` skips them for a quicker look; their score then leaves
 * them out.
 */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  // related: false — a static mutant (module-level code: a regex, a table) runs every test file,
  // not only those vitest finds importing the mutated file: it does not follow the tests' imports
  // through the package's own name (`@hookguard/core/adapter`), so those tests were left out and
  // such mutants survived tests that kill them.
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  mutate: [
    'packages/core/src/**/*.ts',
    // Generated from strip.wat by scripts/build-wasm.ts: one base64 string.
    '!packages/core/src/crypto/strip-wasm-bytes.ts',
    // Types and re-exports only: nothing to mutate.
    '!packages/core/src/crypto/types.ts',
    '!packages/core/src/index.ts',
    '!packages/core/src/adapter.ts',
  ],
  // Each mutant runs only the tests that reached it during the initial run (on either build).
  coverageAnalysis: 'perTest',
  incremental: true,
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  // Two cores: one test runner each.
  concurrency: 2,
  // A mutant times out after timeoutFactor × (its tests' time in the initial run) + timeoutMS.
  // Generous on purpose: token tests derive keys with PBKDF2, whose cost varies with the load of
  // the two runners, and a slow but correct mutant must not be mistaken for a hang.
  timeoutFactor: 3,
  timeoutMS: 15_000,
  dryRunTimeoutMinutes: 15,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // The score table only: every mutant is in the HTML report, and the survivors that matter are
  // listed by scripts/mutation-score.ts afterwards (`--all` lists those of every file).
  clearTextReporter: { reportTests: false, reportMutants: false },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
}
