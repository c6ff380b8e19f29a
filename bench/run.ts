/**
 * `pnpm bench`: every benchmark, each in its own process, then the tables, and (on a
 * full run) docs/benchmarks.md, docs/benchmarks.svg and docs/benchmarks.json.
 *
 * Flags: `--quick` (the CI smoke: short, prints only, writes nothing), `--only micro|web|http|instructions|memory|adversarial|inspect|handoff`
 * (repeatable; a full run of one part keeps the other parts' figures from docs/benchmarks.json),
 * `--baseline=<folder>` (the web part measures another build of the core beside this one, in the
 * same rounds: a copy of a `dist/web` folder, e.g. of the commit before a change),
 * `--units=N` (the adversarial part's repeated units: a sample of N, where every one takes about an hour),
 * `--no-build` (skip rebuilding stale packages), `--report` (measure nothing: rewrite the page from
 * docs/benchmarks.json and bench/notes.md).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, release, totalmem } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, staleBuilds } from '@hookguard/testkit/builds'
import type { Figures, WebRun } from './figures.ts'
import { renderMarkdown } from './report.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const BENCH = join(ROOT, 'bench')
const DOCS = join(ROOT, 'docs')
const RUNTIMES = join(ROOT, 'runtimes', 'node_modules')
const RESULT_PREFIX = '@@result '

const argv = process.argv.slice(2)
const quick = argv.includes('--quick')
const PARTS = ['micro', 'memory', 'web', 'http', 'instructions', 'inspect', 'handoff', 'adversarial'] as const
type Part = (typeof PARTS)[number]
const onlyArgs = argv.flatMap((a, i) => (a === '--only' ? [argv[i + 1]] : a.startsWith('--only=') ? [a.slice(7)] : []))
const parts: Part[] = onlyArgs.length === 0 ? [...PARTS] : PARTS.filter((p) => onlyArgs.includes(p))
if (onlyArgs.some((p) => !PARTS.includes(p as Part))) throw new Error(`bench: --only takes ${PARTS.join(', ')}`)
/** `--units=N`: the adversarial part sends a sample of N repeated units (and the named ones) instead of every one. */
const unitsArg = argv.find((a) => a.startsWith('--units='))
const unitsFlag = unitsArg === undefined ? [] : ['--units', unitsArg.slice('--units='.length)]
const baselineArg = argv.find((a) => a.startsWith('--baseline='))
const baselineFlag = baselineArg === undefined ? [] : [`--baseline=${resolve(baselineArg.slice('--baseline='.length))}`]

const children = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of children) child.kill()
})
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130))

/** Runs one part; its progress goes to our stderr, its figures come back on its result line. */
function runChild<T>(label: string, command: string, args: string[], options: { cwd?: string; timeoutS: number }): Promise<T> {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const child = spawn(command, args, { cwd: options.cwd ?? ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
    children.add(child)
    let out = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    const timer = setTimeout(() => {
      child.kill()
      reject(new Error(`bench: ${label} took longer than ${options.timeoutS} s`))
    }, options.timeoutS * 1000)
    child.on('error', reject)
    child.on('exit', (code) => {
      clearTimeout(timer)
      children.delete(child)
      const line = out.split('\n').find((l) => l.startsWith(RESULT_PREFIX))
      if (code !== 0 || line === undefined) return reject(new Error(`bench: ${label} exited with ${code}\n${out.slice(-2000)}`))
      console.error(`bench: ${label} done in ${((Date.now() - started) / 1000).toFixed(0)} s`)
      resolve(JSON.parse(line.slice(RESULT_PREFIX.length)) as T)
    })
  })
}

// Children that run TypeScript on this Node reuse tsx's loader from our own execArgv; none gets
// the source condition, so every part measures the built packages.
const nodeTs = (file: string, extra: string[] = []) => [...process.execArgv, '--expose-gc', join(BENCH, file), ...extra]
const quickFlag = quick ? ['--quick'] : []

const BUILT_FILES = [
  'core/dist/node/index.js',
  'core/dist/web/index.js',
  'core/dist/edge/index.js',
  'express/dist/index.js',
  'koa/dist/index.js',
  'hono/dist/index.js',
  'inspect/dist/index.js',
].map((file) => join(ROOT, 'packages', file))

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Runs one part, and once more if it failed: a build started elsewhere (tsup empties dist first)
 * can pull the files from under a part that is starting; the retry waits for them to be back.
 */
async function withRetry<T>(label: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    console.error(`bench: ${label} failed (${(error as Error).message.split('\n')[0]}); retrying once the builds are in place`)
    for (let waited = 0; BUILT_FILES.some((file) => !existsSync(file)); waited++) {
      if (waited >= 120) throw error
      await sleep(1000)
    }
    await sleep(3000)
    return run()
  }
}

/** Rebuilds the measured packages whose build is older than their source. */
function ensureBuilt() {
  const stale = staleBuilds({
    core: ['dist/node/index.js', 'dist/web/index.js', 'dist/edge/index.js'],
    express: ['dist/index.js'],
    koa: ['dist/index.js'],
    hono: ['dist/index.js'],
    inspect: ['dist/index.js'],
  })
  if (stale.length === 0) return
  if (argv.includes('--no-build')) {
    console.error(`bench: ${stale.join(', ')} built from older source (--no-build given)`)
    return
  }
  console.error(`bench: building ${stale.join(', ')}`)
  build(stale)
}

function hasValgrind(): boolean {
  return version('valgrind', ['--version']) !== 'unavailable'
}

function version(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8' }).trim().split('\n')[0] ?? '?'
  } catch {
    return 'unavailable'
  }
}

function packageVersion(name: string): string {
  const file = join(BENCH, 'node_modules', name, 'package.json')
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version : '?'
}

function describeMachine(): Record<string, string> {
  const model =
    /model name\s*:\s*(.*)/.exec(existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '')?.[1] ?? cpus()[0]?.model ?? '?'
  const commit = version('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'])
  const dirty = version('git', ['-C', ROOT, 'status', '--porcelain', '--', 'packages']) === '' ? '' : ' (packages modified)'
  return {
    cpu: `${model}, ${cpus().length} cores`,
    memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    // The kernel's family only: its full release string names one build machine.
    kernel: `Linux ${release().split('.').slice(0, 2).join('.')}`,
    commit: `${commit}${dirty}`,
  }
}

function describeVersions(): Record<string, string> {
  const versions: Record<string, string> = {
    'Node (default)': process.version,
    'Node 24': version(join(RUNTIMES, 'node24', 'bin', 'node'), ['--version']),
    Bun: version(join(RUNTIMES, '.bin', 'bun'), ['--version']),
    Deno: version(join(RUNTIMES, '.bin', 'deno'), ['--version']).replace(/ \(.*$/, ''),
    Valgrind: version('valgrind', ['--version']),
  }
  for (const name of [
    '@hookguard/core',
    '@octokit/webhooks-methods',
    'stripe',
    'standardwebhooks',
    'svix',
    'express',
    'express4',
    'koa',
    '@koa/bodyparser',
    'hono',
    '@hono/node-server',
    'autocannon',
  ]) {
    versions[name] = packageVersion(name)
  }
  return versions
}

const loadNow = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')

/** Indented JSON with arrays of plain values kept on one line, the way `biome format` leaves them. */
const toJson = (value: unknown) =>
  JSON.stringify(value, null, 2).replace(/\[\n\s*([^[\]{}]*?)\n\s*\]/g, (_, inner: string) => `[${inner.split(/,\n\s*/).join(', ')}]`)

/** Writes the page, the chart and the figures, formatted as `pnpm lint` expects them. */
function writeDocs(figures: Figures) {
  const notesPath = join(BENCH, 'notes.md')
  const { markdown, svg } = renderMarkdown(figures, existsSync(notesPath) ? readFileSync(notesPath, 'utf8') : '')
  const jsonPath = join(DOCS, 'benchmarks.json')
  const mdPath = join(DOCS, 'benchmarks.md')
  writeFileSync(jsonPath, `${toJson(figures)}\n`)
  writeFileSync(mdPath, markdown)
  if (svg !== '') writeFileSync(join(DOCS, 'benchmarks.svg'), svg)
  // biome formats Markdown tables (column padding) too; letting it do so keeps the lint clean.
  const biome = join(ROOT, 'node_modules', '.bin', 'biome')
  if (existsSync(biome)) execFileSync(biome, ['format', '--write', jsonPath, mdPath], { cwd: ROOT, stdio: 'ignore' })
  else console.error('bench: biome not found; docs/benchmarks.md left unformatted')
}

async function main() {
  const started = Date.now()
  if (argv.includes('--report')) {
    writeDocs(JSON.parse(readFileSync(join(DOCS, 'benchmarks.json'), 'utf8')) as Figures)
    console.error('bench: rewrote docs/benchmarks.md, .svg, .json from docs/benchmarks.json')
    return
  }
  ensureBuilt()
  const figures: Figures = {
    date: new Date().toISOString(),
    quick,
    machine: describeMachine(),
    versions: describeVersions(),
    load: { before: loadNow(), after: '' },
  }
  const scale = quick ? 1 : 6
  if (parts.includes('micro')) {
    figures.micro = await withRetry('micro', () =>
      runChild('micro (Node build)', process.execPath, nodeTs('micro.ts', quickFlag), { timeoutS: 150 * scale }),
    )
  }
  if (parts.includes('memory')) {
    figures.memory = await withRetry('memory', () =>
      runChild('memory', process.execPath, nodeTs('memory.ts', quickFlag), { timeoutS: 60 * scale }),
    )
  }
  if (parts.includes('web')) {
    const web: WebRun[] = []
    const script = join(BENCH, 'web.ts')
    const flags = [...quickFlag, ...baselineFlag]
    const node24 = join(RUNTIMES, 'node24', 'bin', 'node')
    const runs: [string, string, string[], string?][] = [
      // The edge build in a bundled Worker; miniflare needs Node 22 or later.
      ['web in workerd', node24, ['--no-warnings', join(BENCH, 'web-workerd.ts'), ...flags]],
      ['web on Node 24', node24, ['--no-warnings', '--expose-gc', script, ...flags]],
      ['web on Bun', join(RUNTIMES, '.bin', 'bun'), [script, ...flags]],
      // Deno reads the nearest package.json, so it starts from the bench package's folder.
      ['web on Deno', join(RUNTIMES, '.bin', 'deno'), ['run', '--allow-read', '--v8-flags=--expose-gc', script, ...flags], BENCH],
      ['web on Node 20', process.execPath, nodeTs('web.ts', flags)],
    ]
    for (const [label, command, args, cwd] of runs) {
      web.push(await withRetry(label, () => runChild<WebRun>(label, command, args, { timeoutS: 90 * scale, ...(cwd ? { cwd } : {}) })))
    }
    figures.web = web
  }
  if (parts.includes('http')) {
    figures.http = await withRetry('http', () =>
      runChild('http', process.execPath, [...process.execArgv, join(BENCH, 'http.ts'), ...quickFlag], { timeoutS: 450 * scale }),
    )
  }
  if (parts.includes('instructions') && !hasValgrind()) {
    // Asked for by name, it fails; as part of everything, the page keeps its last counts.
    if (onlyArgs.includes('instructions')) throw new Error('bench: the instructions part needs Valgrind (apt-get install -y valgrind)')
    console.error('bench: instructions skipped: Valgrind is not installed (apt-get install -y valgrind)')
  } else if (parts.includes('instructions')) {
    figures.instructions = await withRetry('instructions', () =>
      runChild('instructions (under callgrind)', process.execPath, [...process.execArgv, join(BENCH, 'instructions.ts'), ...quickFlag], {
        // Each server's 30 000 requests of warm-up run under Valgrind: the four frameworks took 33 minutes here.
        timeoutS: quick ? 600 : 7200,
      }),
    )
  }
  if (parts.includes('inspect')) {
    figures.inspect = await withRetry('inspect', () =>
      runChild('inspect (proxy overhead)', process.execPath, [...process.execArgv, join(BENCH, 'inspect.ts'), ...quickFlag], {
        timeoutS: 60 * scale,
      }),
    )
  }
  if (parts.includes('handoff')) {
    figures.handoff = await withRetry('handoff', () =>
      runChild('handoff (answer latency, open loop)', process.execPath, [...process.execArgv, join(BENCH, 'handoff.ts'), ...quickFlag], {
        timeoutS: quick ? 120 : 600,
      }),
    )
  }
  if (parts.includes('adversarial')) {
    // Last: its HTTP phase loads the machine on purpose, and nothing measured after it should feel that.
    figures.adversarial = await withRetry('adversarial', () =>
      runChild('adversarial', process.execPath, nodeTs('adversarial.ts', [...quickFlag, ...unitsFlag]), {
        // Every repeated unit through every entry point on both builds is about an hour here.
        timeoutS: 60 * scale + (quick || unitsFlag.length > 0 ? 0 : 3 * 3600),
      }),
    )
  }
  figures.load.after = loadNow()

  const jsonPath = join(DOCS, 'benchmarks.json')
  // A partial full run keeps the other parts' last figures, so the page always shows every target.
  const merged: Figures =
    !quick && parts.length < PARTS.length && existsSync(jsonPath)
      ? { ...(JSON.parse(readFileSync(jsonPath, 'utf8')) as Figures), ...figures }
      : figures
  console.log(renderMarkdown(merged, '').tables)
  if (quick) {
    console.error(`bench: quick run done in ${((Date.now() - started) / 1000).toFixed(0)} s; docs left as they were`)
    return
  }
  writeDocs(merged)
  console.error(`bench: done in ${((Date.now() - started) / 1000).toFixed(0)} s; wrote docs/benchmarks.md, .svg, .json`)
}

await main()
