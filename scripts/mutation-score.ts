/**
 * Reads the mutation report that `stryker run` writes (mutation-testing-report-schema JSON) and
 * prints the mutation score over all mutated files and over the security-relevant files of the
 * core, then lists the undetected mutants of those files (file:line:column, mutator, original
 * code → replacement).
 *
 * The score is Stryker's, detected over valid mutants, with one correction. Detected: killed or
 * timed out. Valid: detected, survived, or reached by no test. Not counted: mutants that did not
 * compile, and those disabled by a `// Stryker disable` comment. The correction: a mutant that
 * makes a module throw while it loads (say `new TextDecoder('')`) fails every test file before
 * any test runs, and the vitest runner reports that as a survivor with no test completed; such a
 * mutant breaks every verdict, so it counts as detected, shown apart as "failed to load".
 *
 * Usage: `pnpm test:mutation:score [--report FILE] [--all] [--check]` (`pnpm test:mutation` ends with it)
 *   --report FILE  the JSON report (default reports/mutation/mutation.json)
 *   --all          also list the undetected mutants of every other file
 *   --check        exit 1 when the security files score under TARGET_SCORE
 */
import { readFileSync } from 'node:fs'
import { isAbsolute, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'

/** Where the core's sources live, relative to the repository root. */
const CORE_SRC = 'packages/core/src'

/**
 * The security-relevant files of the core: verdicts on signatures, credentials and tokens, and
 * the parsing and limits that stand before them. The one list of them; edit it here when a file
 * is added or renamed (a listed file missing from the report is reported, not ignored).
 */
export const SECURITY_FILES: readonly string[] = [
  'signature.ts',
  'canonical.ts',
  // The portable whitespace stripper, once part of canonical.ts.
  'strip.ts',
  'constant-time.ts',
  'basic.ts',
  // SecretDigest (was credentials.ts): Basic credentials and the token client, compared as digests.
  'secret-digest.ts',
  // The HMAC keys of the secrets, imported once (was hmac.ts).
  'hmac-keys.ts',
  'token.ts',
  'token-keys.ts',
  'token-endpoint.ts',
  'authenticate.ts',
  'receiver.ts',
  'body.ts',
  // The Node request's headers and its body read within the limit, for every Node adapter.
  'node.ts',
  'json.ts',
  // Form bodies: the token field and the payload built from the other fields.
  'form.ts',
  'request.ts',
  'options.ts',
  'bytes.ts',
  // What a refused body's rest costs, and whether its connection is kept.
  'drain.ts',
  // Each delivery once: what a delivery is (its fingerprint), whose it is (the key's scope), and
  // the claim that keeps a second run out.
  'fingerprint.ts',
  'dedupe.ts',
  'dedupe-key.ts',
  'dedupe-store.ts',
].map((file) => `${CORE_SRC}/${file}`)

/** The score the security files are to reach. */
export const TARGET_SCORE = 90

type MutantStatus = 'Killed' | 'Survived' | 'NoCoverage' | 'Timeout' | 'CompileError' | 'RuntimeError' | 'Ignored' | 'Pending'

interface Position {
  line: number
  column: number
}

interface MutantResult {
  id: string
  mutatorName: string
  replacement?: string
  location: { start: Position; end: Position }
  status: MutantStatus
  testsCompleted?: number
}

interface FileResult {
  source: string
  mutants: MutantResult[]
}

interface MutationReport {
  projectRoot?: string
  files: Record<string, FileResult>
}

type Outcome = 'detected' | 'failedToLoad' | 'survived' | 'noCoverage' | 'invalid' | 'ignored' | 'pending'

function outcome({ status, testsCompleted }: MutantResult): Outcome {
  switch (status) {
    case 'Killed':
    case 'Timeout':
      return 'detected'
    case 'Survived':
      return testsCompleted === 0 ? 'failedToLoad' : 'survived'
    case 'NoCoverage':
      return 'noCoverage'
    case 'CompileError':
    case 'RuntimeError':
      return 'invalid'
    case 'Ignored':
      return 'ignored'
    default:
      return 'pending'
  }
}

const isUndetected = (mutant: MutantResult) => ['survived', 'noCoverage'].includes(outcome(mutant))

type Tally = Record<Outcome, number>

function tally(files: Iterable<FileResult>): Tally {
  const counts: Tally = { detected: 0, failedToLoad: 0, survived: 0, noCoverage: 0, invalid: 0, ignored: 0, pending: 0 }
  for (const file of files) for (const mutant of file.mutants) counts[outcome(mutant)]++
  return counts
}

const detected = (counts: Tally) => counts.detected + counts.failedToLoad
const valid = (counts: Tally) => detected(counts) + counts.survived + counts.noCoverage

function score(counts: Tally): number {
  return valid(counts) === 0 ? Number.NaN : (100 * detected(counts)) / valid(counts)
}

function scoreLine(label: string, width: number, counts: Tally): string {
  const value = score(counts)
  const shown = Number.isNaN(value) ? '   n/a  ' : `${value.toFixed(2).padStart(6)} %`
  const notes = [
    counts.failedToLoad && `${counts.failedToLoad} failed to load`,
    counts.invalid && `${counts.invalid} invalid`,
    counts.ignored && `${counts.ignored} ignored`,
    counts.pending && `${counts.pending} not run`,
  ].filter(Boolean)
  const detail = `${detected(counts)}/${valid(counts)} detected, ${counts.survived} survived, ${counts.noCoverage} not covered`
  return `  ${label.padEnd(width)}  ${shown}  ${detail}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`
}

function oneLine(text: string, max = 70): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** The mutated code as it stands in the source, on one line and cut short. */
function original(source: string, { start, end }: MutantResult['location']): string {
  const lines = source.split('\n')
  const first = lines[start.line - 1] ?? ''
  if (start.line === end.line) return oneLine(first.slice(start.column - 1, end.column - 1))
  const middle = lines.slice(start.line, end.line - 1)
  const last = (lines[end.line - 1] ?? '').slice(0, end.column - 1)
  return oneLine([first.slice(start.column - 1), ...middle, last].join('\n'))
}

function listUndetected(path: string, file: FileResult): string[] {
  const undetected = file.mutants
    .filter(isUndetected)
    .sort((a, b) => a.location.start.line - b.location.start.line || a.location.start.column - b.location.start.column)
  if (undetected.length === 0) return []
  return [
    `${path} (${undetected.length})`,
    ...undetected.map((mutant) => {
      const { line, column } = mutant.location.start
      const note = mutant.status === 'NoCoverage' ? '  [no coverage]' : ''
      const change = `${original(file.source, mutant.location)}  →  ${oneLine(mutant.replacement ?? '?')}`
      return `  ${path}:${line}:${column}  ${mutant.mutatorName}: ${change}${note}`
    }),
  ]
}

function main(): number {
  const { values } = parseArgs({
    options: {
      report: { type: 'string', default: 'reports/mutation/mutation.json' },
      all: { type: 'boolean', default: false },
      check: { type: 'boolean', default: false },
    },
  })
  const reportPath = resolve(values.report)
  const report = JSON.parse(readFileSync(reportPath, 'utf8')) as MutationReport
  // Stryker names files relative to the project root, this repository's; absolute names only when
  // they lie outside it.
  const root = report.projectRoot ?? process.cwd()
  const files = new Map<string, FileResult>()
  for (const [name, file] of Object.entries(report.files)) {
    files.set((isAbsolute(name) ? relative(root, name) : name).replaceAll('\\', '/'), file)
  }
  const fileOf = (path: string) => files.get(path) as FileResult

  const security = SECURITY_FILES.filter((path) => files.has(path))
  const missing = SECURITY_FILES.filter((path) => !files.has(path))
  const securityCounts = tally(security.map(fileOf))
  const width = Math.max(...security.map((path) => path.length))

  const out = [`Mutation score (${relative(process.cwd(), reportPath)}); target ${TARGET_SCORE} % on the security files`]
  out.push(scoreLine(`all ${files.size} mutated files`, width, tally(files.values())))
  out.push(scoreLine(`the ${security.length} security files`, width, securityCounts))
  if (missing.length > 0) out.push(`  listed as security files but absent from the report: ${missing.join(', ')}`)
  out.push('', 'Security files:')
  for (const path of security) out.push(scoreLine(path, width, tally([fileOf(path)])))

  const undetected = security.flatMap((path) => listUndetected(path, fileOf(path)))
  out.push(
    '',
    undetected.length > 0 ? 'Undetected mutants in the security files:' : 'No undetected mutant in the security files.',
    ...undetected,
  )
  if (values.all) {
    const others = [...files.keys()].filter((path) => !SECURITY_FILES.includes(path)).sort()
    const rest = others.flatMap((path) => listUndetected(path, fileOf(path)))
    out.push('', rest.length > 0 ? 'Undetected mutants in the other files:' : 'No undetected mutant in the other files.', ...rest)
  }
  console.log(out.join('\n'))

  if (values.check && !(score(securityCounts) >= TARGET_SCORE)) {
    console.error(`\nThe security files score under ${TARGET_SCORE} %.`)
    return 1
  }
  return 0
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) process.exitCode = main()
