/**
 * Every TypeScript and JavaScript block of README.md and packages/*\/README.md, as a user would
 * paste it into a fresh project that installed the packed tarballs, compiled and run where users
 * put it:
 *
 * 1. read from the Markdown and classified (scripts/lib/snippets.ts: a complete file, a fragment
 *    with a named context, or `nocompile` with a reason; an unannotated block that is not a
 *    complete file fails the run);
 * 2. compiled, each block a whole file, all of a project's blocks in one `tsc -p`:
 *    - in the projects a user starts from: README.md's setup line (`npm init -y && npm pkg set
 *      type=module`), then the tsconfig.json that `tsc --init` writes, with TypeScript 5.9 and with
 *      TypeScript 7 (`exactOptionalPropertyTypes`, `verbatimModuleSyntax`, `declaration`…), changed
 *      only where README.md says to (`"types": ["node"]`); its TypeScript blocks;
 *    - in a NodeNext ESM project (`strict`, `module: nodenext`, JavaScript checked too): every Node block;
 *    - Worker blocks with `moduleResolution: bundler` and `@cloudflare/workers-types` (their run is
 *      in the runtime matrix's workerd job);
 * 3. run with tsx, as README.md tells users, in the `tsc --init` (5.9) project: every server on an
 *    ephemeral port, on each framework major the README names (Express 4 and 5, Koa 2 and 3),
 *    delivered to by `@hookguard/emulator`'s `deliver` in each mode it shows: the genuine delivery
 *    must get the status the README says, a tampered one a refusal; every `run` file must exit 0;
 *    every Fetch route module that serves the token address is imported and must answer a token
 *    request by GET (the service) and by POST (OAuth clients); the README's `npx -p @hookguard/emulator hookguard send`
 *    lines must print what it says.
 *
 * What is installed is what the READMEs' `npm install` lines name (wrangler aside: workerd is the
 * runtime matrix's), plus the older framework majors and TypeScript 5.9 and 7 under aliases
 * (`ts59`, `ts7`): one `npm install --prefer-offline` into a temporary folder outside the
 * repository, removed at the end (kept with --keep; `--reuse=<folder>` skips packing and
 * installing, for a folder kept before). Bounded by one deadline (HOOKGUARD_SNIPPETS_TIMEOUT
 * seconds, default 360). Run after `pnpm build`: `pnpm test:snippets`.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createConnection, createServer } from 'node:net'
import { availableParallelism, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { type RedisServer, startRedis } from '@hookguard/testkit/redis-server'
import { packAll, ROOT, run, tail } from './lib/packages.ts'
import { CONTEXTS } from './lib/snippet-contexts.ts'
import { deliverAll, type Emulator, ENV } from './lib/snippet-deliveries.ts'
import { type Delivery, extractAll, readmeFiles, type Snippet, startsServer } from './lib/snippets.ts'

const TIMEOUT_S = Number(process.env.HOOKGUARD_SNIPPETS_TIMEOUT ?? 360)
const KEEP = process.argv.includes('--keep')
const REUSE = process.argv.find((arg) => arg.startsWith('--reuse='))?.slice('--reuse='.length)

/** Installed by the READMEs' lines but not needed here: workerd is the runtime matrix's. */
const NOT_INSTALLED = new Set(['wrangler'])
/**
 * The projects a user starts from: README.md's setup, then `tsc --init` of each TypeScript. The
 * first is also where the blocks run.
 */
const USER_PROJECTS = [
  { folder: 'user-ts59', typescript: 'ts59', spec: 'ts59@npm:typescript@~5.9', label: 'TypeScript 5.9' },
  { folder: 'user-ts7', typescript: 'ts7', spec: 'ts7@npm:typescript@^7', label: 'TypeScript 7' },
] as const
const RUN_PROJECT = USER_PROJECTS[0].folder
/** Blocks run at once: a server mostly waits on its sockets, so a few share a core. */
const JOBS = Math.min(4, Math.max(2, availableParallelism()))
/** A framework the READMEs say works in two majors: the older one, installed under an alias. */
const OLDER_MAJORS: Record<string, { alias: string; spec: string }> = {
  express: { alias: 'express4', spec: 'express4@npm:express@^4' },
  koa: { alias: 'koa2', spec: 'koa2@npm:koa@^2' },
}
const rootManifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }

const started = Date.now()
const signal = AbortSignal.timeout(TIMEOUT_S * 1000)
const workdir = REUSE ?? mkdtempSync(join(tmpdir(), 'hookguard-snippets-'))
let passed = 0
let failed = 0
const counts = { compiled: 0, fragments: 0, skipped: 0, servers: 0, deliveries: 0, runs: 0, cli: 0 }

async function check(name: string, body: () => Promise<string | undefined>): Promise<boolean> {
  const t = Date.now()
  try {
    const detail = await body()
    passed++
    console.log(`✓ ${name} (${((Date.now() - t) / 1000).toFixed(1)} s)${detail ? `: ${detail}` : ''}`)
    return true
  } catch (error) {
    failed++
    const message = signal.aborted
      ? `timed out (HOOKGUARD_SNIPPETS_TIMEOUT=${TIMEOUT_S})`
      : error instanceof Error
        ? error.message
        : String(error)
    console.log(`✗ ${name}\n    ${message.replaceAll('\n', '\n    ')}`)
    return false
  }
}

function write(path: string, text: string): void {
  const file = join(workdir, path)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, text)
}

/** A snippet as a file of the project: the fragment inside its context, and where its lines came from. */
interface Source {
  snippet: Snippet
  /** Relative to the project folder: `src/readme-59.ts`. */
  path: string
  text: string
  /** Lines of preamble before the snippet's first line. */
  offset: number
  /** Whether it imports a framework that has an older major to run on too. */
  frameworks: string[]
}

try {
  const { snippets, problems } = extractAll(ROOT)
  const compiled = snippets.filter((s) => s.kind !== 'nocompile')
  const sources = compiled.map(toSource)
  counts.skipped = snippets.length - compiled.length
  counts.fragments = compiled.filter((s) => s.kind === 'fragment').length

  await check(`classify ${snippets.length} code blocks of ${readmeFiles(ROOT).length} READMEs`, async () => {
    const more = [...problems]
    for (const s of compiled) {
      if (s.context !== undefined && CONTEXTS[s.context] === undefined) {
        more.push(`${s.readme}:${s.line}: no context "${s.context}" (known: ${Object.keys(CONTEXTS).join(', ')})`)
      }
      if (s.context !== undefined && CONTEXTS[s.context]?.env !== s.env && s.env !== 'node') {
        more.push(`${s.readme}:${s.line}: env=${s.env} differs from its context's`)
      }
      if (startsServer(s) && !s.run && s.deliveries.length === 0) {
        more.push(`${s.readme}:${s.line}: a server with nothing to deliver: annotate it <!-- snippet: file deliver=MODE -->`)
      }
      if (s.deliveries.length > 0 && s.kind === 'fragment' && CONTEXTS[s.context ?? '']?.postamble === undefined) {
        more.push(`${s.readme}:${s.line}: deliver= on a fragment needs a context that starts a server`)
      }
    }
    if (more.length > 0) throw new Error(more.join('\n'))
    const reasons = snippets.filter((s) => s.kind === 'nocompile').map((s) => `${s.readme}:${s.line} (${s.reason})`)
    return `${compiled.length - counts.fragments} files, ${counts.fragments} fragments, ${counts.skipped} not compiled${reasons.length > 0 ? `: ${reasons.join('; ')}` : ''}`
  })

  await check('the package READMEs stand alone on the registry: absolute links', async () => standAlone())

  const installed = REUSE !== undefined ? existsSync(join(workdir, 'node_modules')) : await install()
  if (!installed) throw new Error('install failed; nothing to test')
  const projects = await check("the projects users start from: README.md's setup line, then `tsc --init` of TypeScript 5.9 and 7", () =>
    writeProjects(sources),
  )
  if (!projects) throw new Error('no project to compile in')

  const node = sources.filter((s) => s.snippet.env === 'node')
  const typescript = node.filter((s) => s.snippet.lang === 'ts')
  const workers = sources.filter((s) => s.snippet.env === 'workers')
  // One tsc per project, side by side: tsc 5.9 uses one core.
  const [nodeOk, runnable] = await Promise.all([
    check(`tsc --strict, module nodenext, JavaScript checked: ${node.length} Node snippets`, () => tsc('node', node, 'typescript', true)),
    ...USER_PROJECTS.map(({ folder, typescript: compiler, label }) =>
      check(`${label}, the tsconfig.json of its tsc --init: ${typescript.length} TypeScript snippets`, () =>
        tsc(folder, typescript, compiler, false),
      ),
    ),
    check(`tsc --strict, moduleResolution bundler, @cloudflare/workers-types: ${workers.length} Worker snippets`, () =>
      tsc('workers', workers, 'typescript', true),
    ),
  ])
  if (nodeOk && runnable) {
    const emulator = (await import(pathToFileURL(join(workdir, 'node_modules/@hookguard/emulator/dist/index.js')).href)) as Emulator
    // What the API client's snippets call: the service's API v2, emulated, with the READMEs' credentials.
    const service = await emulator.mockService({ appId: ENV.APP_ID, appSecret: ENV.APP_SECRET })
    try {
      // The runs are independent (each server on its own port): a few at a time, in README order.
      const tasks: (() => Promise<boolean>)[] = []
      for (const source of node) {
        const { snippet } = source
        if (snippet.run) {
          tasks.push(() =>
            check(`run ${where(snippet)} with tsx: exits 0`, async () => {
              counts.runs++
              const env = snippetEnv({ SERVICE_API_URL: service.url })
              const result = await run(tsxBin(), [source.path], { cwd: join(workdir, RUN_PROJECT), signal, env })
              if (result.code !== 0) throw new Error(`exited ${result.code}\n${tail(result)}`)
              return undefined
            }),
          )
        }
        if (isTokenRoute(source)) {
          tasks.push(() =>
            check(`import the route module ${where(snippet)}: GET and POST answer a token request`, () => checkTokenRoute(source)),
          )
        }
        if (snippet.deliveries.length === 0) continue
        for (const framework of ['', ...source.frameworks]) {
          const label = framework === '' ? '' : ` on ${OLDER_MAJORS[framework]?.alias}`
          tasks.push(() =>
            check(`serve ${where(snippet)} with tsx${label}: ${snippet.deliveries.map(describe).join(', ')}`, () =>
              serveAndDeliver(source, framework, emulator),
            ),
          )
        }
      }
      await inParallel(tasks, JOBS)
    } finally {
      await service.close()
    }
    await checkCliLines(sources)
  }
} catch (error) {
  failed++
  console.log(`✗ ${error instanceof Error ? error.message : String(error)}`)
} finally {
  if (KEEP || REUSE !== undefined) console.log(`kept ${workdir}`)
  else rmSync(workdir, { recursive: true, force: true })
}
console.log(
  `compiled ${counts.compiled} snippets (${counts.fragments} fragments; ${counts.skipped} not compiled); ran ${counts.servers} servers with ${counts.deliveries} deliveries, ${counts.runs} scripts, ${counts.cli} command lines`,
)
console.log(`snippets: ${passed} passed, ${failed} failed (${((Date.now() - started) / 1000).toFixed(1)} s)`)
process.exitCode = failed === 0 ? 0 : 1

/** Runs the tasks, at most `jobs` at a time, starting them in order. */
async function inParallel(tasks: readonly (() => Promise<unknown>)[], jobs: number): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]?.()
  }
  await Promise.all(Array.from({ length: jobs }, worker))
}

function where(snippet: Snippet): string {
  return `${snippet.readme}:${snippet.line}`
}

function describe({ mode, path }: Delivery): string {
  return path === '/webhooks' ? mode : `${mode} ${path}`
}

function toSource(snippet: Snippet): Source {
  const context = snippet.context === undefined ? undefined : CONTEXTS[snippet.context]
  const preamble = context === undefined ? '' : `${context.preamble}\n// ── ${snippet.readme}:${snippet.line}\n`
  const postamble = context?.postamble !== undefined && snippet.deliveries.length > 0 ? `\n${context.postamble}` : ''
  const text = `${preamble}${snippet.code}${postamble}`
  const frameworks = Object.keys(OLDER_MAJORS).filter((name) => new RegExp(`from '${name}'`).test(text))
  const extension = snippet.lang === 'ts' ? 'ts' : 'js'
  return { snippet, path: `src/${snippet.id}.${extension}`, text, offset: preamble.split('\n').length - 1, frameworks }
}

/**
 * A Fetch route module that serves the token address (`tokenEndpoint`), not started as a server:
 * it is imported and its exports called, as Next.js calls a route's `GET` and `POST`.
 */
function isTokenRoute({ snippet, text }: Source): boolean {
  return (
    snippet.env === 'node' &&
    snippet.deliveries.length === 0 &&
    /from '@hookguard\/fetch'/.test(text) &&
    /\btokenEndpoint\(/.test(snippet.code)
  )
}

/**
 * Imports the route module with tsx and calls its `GET` with the service's token request and its
 * `POST` with an OAuth client's (`client_secret_basic`): the README routes both methods to the
 * token address, and each must answer 200 with an access token.
 */
async function checkTokenRoute(source: Source): Promise<string> {
  const driver = join(workdir, RUN_PROJECT, 'token-route.mjs')
  writeFileSync(
    driver,
    `import { pathToFileURL } from 'node:url'
const route = await import(pathToFileURL(process.argv[2]).href)
const { APP_ID, APP_SECRET } = process.env
const address = 'http://localhost:3000/webhooks/token'
const requests = {
  GET: () => new Request(address + '?' + new URLSearchParams({ appid: APP_ID, secret: APP_SECRET, grant_type: 'client_credentials' })),
  POST: () =>
    new Request(address, {
      method: 'POST',
      headers: {
        authorization: 'Basic ' + btoa(encodeURIComponent(APP_ID) + ':' + encodeURIComponent(APP_SECRET)),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    }),
}
const answers = {}
for (const [method, request] of Object.entries(requests)) {
  if (typeof route[method] !== 'function') {
    answers[method] = 'not exported'
    continue
  }
  const response = await route[method](request())
  const body = await response.json().catch(() => ({}))
  answers[method] = response.status === 200 && typeof body.access_token === 'string' ? 'token' : (response.status + ' ' + (body.error ?? '')).trim()
}
console.log(JSON.stringify(answers))
`,
  )
  const result = await run(tsxBin(), [driver, source.path], { cwd: join(workdir, RUN_PROJECT), signal, env: snippetEnv({}) })
  const answers = result.code === 0 ? (JSON.parse(result.stdout.trim().split('\n').pop() ?? '{}') as Record<string, string>) : undefined
  if (answers?.GET !== 'token' || answers.POST !== 'token') {
    const said = answers === undefined ? `the import failed\n${tail(result)}` : `GET: ${answers.GET}, POST: ${answers.POST}`
    throw new Error(`a token route must answer the service's GET and an OAuth client's POST with a token; ${said}`)
  }
  return 'GET 200, POST 200'
}

/** npm shows a package's README without the repository around it: a relative link there is a dead link. */
function standAlone(): string {
  const problems: string[] = []
  const readmes = readmeFiles(ROOT).filter((file) => file.startsWith('packages/'))
  for (const readme of readmes) {
    const text = readFileSync(join(ROOT, readme), 'utf8')
    text.split('\n').forEach((line, i) => {
      for (const [, target] of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (!/^(https?:|mailto:|#)/.test(target as string)) problems.push(`${readme}:${i + 1}: relative link ${target}`)
      }
    })
  }
  if (problems.length > 0) throw new Error(problems.join('\n'))
  return `${readmes.length} READMEs`
}

/** The snippet's environment: the READMEs' variables, and no colour. */
function snippetEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...ENV, ...extra }
}

/**
 * The packages the READMEs' `npm install` commands name, as written (a version range if they give
 * one): in shell blocks, and in inline code such as (`npm install redis`).
 */
function readmeInstalls(): string[] {
  const names = new Set<string>()
  for (const readme of readmeFiles(ROOT)) {
    const text = readFileSync(join(ROOT, readme), 'utf8')
    for (const match of text.matchAll(/(?:^\s*(?:\$\s+)?|`)npm (?:install|i|add)\s+([^`\n]*)/gm)) {
      const words = (match[1] as string).replace(/#.*$/, '').trim().split(/\s+/)
      // A global install is a tool for the reader's machine (pnpm for contributors), not the project's.
      if (words.includes('-g') || words.includes('--global')) continue
      for (const word of words) {
        if (word !== '' && !word.startsWith('-')) names.add(word)
      }
    }
  }
  return [...names]
}

async function install(): Promise<boolean> {
  const tarballs = new Map<string, string>()
  const packed = await check('pack every package', async () => {
    mkdirSync(join(workdir, 'tarballs'))
    for (const [name, file] of await packAll(join(workdir, 'tarballs'), signal)) tarballs.set(name, file)
    return [...tarballs.keys()].join(', ')
  })
  if (!packed) return false
  const named = readmeInstalls()
  const nameOf = (spec: string) => spec.replace(/^(@?[^@]+).*$/, '$1')
  const unknown = named.filter((spec) => spec.startsWith('@hookguard/') && !tarballs.has(nameOf(spec)))
  const registry = named.filter((spec) => !spec.startsWith('@hookguard/') && !NOT_INSTALLED.has(nameOf(spec)))
  const extras = [
    ...Object.values(OLDER_MAJORS).map(({ spec }) => spec),
    ...USER_PROJECTS.map(({ spec }) => spec),
    `typescript@${rootManifest.devDependencies.typescript}`,
    `@types/node@${rootManifest.devDependencies['@types/node']}`,
  ].filter((spec) => !registry.some((other) => nameOf(other) === nameOf(spec)))
  return check(`npm install the tarballs and what the READMEs name: ${registry.join(' ')}`, async () => {
    if (unknown.length > 0) throw new Error(`the READMEs install packages that are not in the workspace: ${unknown.join(', ')}`)
    write('package.json', `${JSON.stringify({ name: 'hookguard-snippets', private: true }, null, 2)}\n`)
    const args = [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      ...tarballs.values(),
      ...registry,
      ...extras,
    ]
    const result = await run('npm', args, { cwd: workdir, signal })
    if (result.code !== 0) throw new Error(`npm install exited ${result.code}\n${tail(result)}`)
    return `${tarballs.size} tarballs, ${registry.length + extras.length} registry packages`
  })
}

/** The tsx of the temporary project, which the READMEs install. */
function tsxBin(): string {
  return join(workdir, 'node_modules', '.bin', 'tsx')
}

/** A TypeScript installed in the temporary project (`typescript`, or an alias such as `ts7`): its tsc. */
function tscOf(name: string): string {
  return join(workdir, 'node_modules', name, 'bin', 'tsc')
}

/**
 * What README.md tells a user to set a project up with: its shell line that starts with
 * `npm init`, as commands (`npm init -y && npm pkg set type=module`).
 */
function readmeSetup(): string[][] {
  const text = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const line = /^(?:\$\s+)?(npm init\b[^\n#]*)/m.exec(text)?.[1]
  if (line === undefined) {
    throw new Error('README.md gives no setup line for the project (`npm init -y && npm pkg set type=module`) to start from')
  }
  return line.split('&&').map((command) => command.trim().split(/\s+/))
}

/**
 * The projects, written afresh: the NodeNext and Workers projects (settings of our own), and the
 * projects a user starts from, made the way README.md says, with the tsconfig.json of `tsc --init`.
 */
async function writeProjects(sources: readonly Source[]): Promise<string> {
  const strict = { strict: true, skipLibCheck: true, target: 'es2022', allowJs: true, checkJs: true, noEmit: true }
  for (const folder of [
    'node',
    'workers',
    ...USER_PROJECTS.map((p) => p.folder),
    ...Object.values(OLDER_MAJORS).map((m) => `user-${m.alias}`),
  ]) {
    rmSync(join(workdir, folder), { recursive: true, force: true })
  }
  write('node/package.json', '{ "type": "module" }\n')
  write(
    'node/tsconfig.json',
    `${JSON.stringify({ compilerOptions: { ...strict, module: 'nodenext', types: ['node'] }, include: ['src'] }, null, 2)}\n`,
  )
  write('workers/package.json', '{ "type": "module" }\n')
  write(
    'workers/tsconfig.json',
    `${JSON.stringify(
      {
        compilerOptions: {
          ...strict,
          module: 'es2022',
          moduleResolution: 'bundler',
          lib: ['es2022'],
          types: ['@cloudflare/workers-types'],
        },
        include: ['src'],
      },
      null,
      2,
    )}\n`,
  )
  for (const source of sources) write(join(source.snippet.env, source.path), source.text)

  const setup = readmeSetup()
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  // tsc --init leaves the Node types out ("types": []) and says in a comment to add them; README.md must say so too.
  if (!readme.includes('tsc --init') || !readme.includes('"types": ["node"]')) {
    throw new Error('README.md does not tell users to compile under `tsc --init`\'s tsconfig.json with "types": ["node"]')
  }
  for (const { folder, typescript, label } of USER_PROJECTS) {
    const dir = join(workdir, folder)
    mkdirSync(dir, { recursive: true })
    for (const [command = '', ...args] of setup) {
      const result = await run(command, args, { cwd: dir, signal })
      if (result.code !== 0) throw new Error(`${[command, ...args].join(' ')} exited ${result.code}\n${tail(result)}`)
    }
    const init = await run('node', [tscOf(typescript), '--init'], { cwd: dir, signal })
    if (init.code !== 0) throw new Error(`tsc --init of ${label} exited ${init.code}\n${tail(init)}`)
    const config = readFileSync(join(dir, 'tsconfig.json'), 'utf8')
    if (!/^\s*"types": \[\],?\s*$/m.test(config))
      throw new Error(`tsc --init of ${label} wrote no "types": [] to set to ["node"]\n${config}`)
    writeFileSync(join(dir, 'tsconfig.json'), config.replace(/^(\s*)"types": \[\]/m, '$1"types": ["node"]'))
    for (const source of sources.filter((s) => s.snippet.env === 'node')) write(join(folder, source.path), source.text)
  }
  // The older majors: the run project's package.json and tsconfig.json, and in its own
  // node_modules the alias under the framework's name, so that a block copied there resolves
  // `express` to Express 4.
  for (const [framework, { alias }] of Object.entries(OLDER_MAJORS)) {
    const folder = join(workdir, `user-${alias}`)
    mkdirSync(join(folder, 'node_modules'), { recursive: true })
    for (const file of ['package.json', 'tsconfig.json']) copyFileSync(join(workdir, RUN_PROJECT, file), join(folder, file))
    symlinkSync(join(workdir, 'node_modules', alias), join(folder, 'node_modules', framework), 'dir')
  }
  const type = JSON.parse(readFileSync(join(workdir, RUN_PROJECT, 'package.json'), 'utf8')).type as string | undefined
  return `${setup.map((command) => command.join(' ')).join(' && ')} ("type": "${type}"); tsc --init; "types": ["node"]`
}

/**
 * One `tsc -p` over a project's blocks, with the given TypeScript; an error is reported at its
 * README line. `counted`: the project whose successes the summary counts.
 */
async function tsc(project: string, mine: readonly Source[], compiler: string, counted: boolean): Promise<string | undefined> {
  if (mine.length === 0) return 'none'
  const result = await run('node', [tscOf(compiler), '-p', 'tsconfig.json', '--pretty', 'false'], { cwd: join(workdir, project), signal })
  if (result.code === 0) {
    if (counted) counts.compiled += mine.length
    return undefined
  }
  const lines = `${result.stdout}\n${result.stderr}`
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const match = /^src\/([\w.-]+?)\.(?:ts|js)\((\d+),(\d+)\): (.*)$/.exec(line)
      const source = match && mine.find((s) => s.path === `src/${match[1]}.${s.snippet.lang}`)
      if (!match || !source) return line
      const at = Number(match[2]) - source.offset
      const total = source.snippet.code.split('\n').length - 1
      const place =
        at >= 1 && at <= total
          ? `${source.snippet.readme}:${source.snippet.line + at}`
          : `${where(source.snippet)} (in the context ${source.snippet.context}, line ${match[2]})`
      return `${place}:${match[3]}: ${match[4]}`
    })
  if (counted) counts.compiled += mine.length - new Set(lines.map((line) => line.split(':').slice(0, 2).join(':'))).size
  throw new Error(lines.join('\n'))
}

interface Running {
  child: ChildProcess
  output: () => string
  stop: () => Promise<void>
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** Starts a block with tsx and PORT set; resolves once it accepts connections on 127.0.0.1. */
async function start(file: string, cwd: string, port: number, env: Record<string, string> = {}): Promise<Running> {
  const child = spawn(tsxBin(), [file], { cwd, env: snippetEnv({ PORT: String(port), ...env }), stdio: ['ignore', 'pipe', 'pipe'], signal })
  let output = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk
  })
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk
  })
  child.on('error', () => undefined)
  let exited = false
  const closed = new Promise<void>((resolve) =>
    child.on('close', () => {
      exited = true
      resolve()
    }),
  )
  const stop = async () => {
    if (exited) return
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
    await closed
    clearTimeout(timer)
  }
  const until = Date.now() + 15_000
  for (;;) {
    if (exited) throw new Error(`the server exited before it listened\n${output.trim()}`)
    if (await accepts(port)) return { child, output: () => output, stop }
    if (Date.now() > until || signal.aborted) {
      await stop()
      throw new Error(`the server did not listen on port ${port} within 15 s\n${output.trim()}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/**
 * A server that reads `REDIS_URL` (the hand-off's receivers) gets a redis-server of its own on
 * loopback: two blocks that queue the same delivery must not meet each other's job.
 */
async function redisFor(snippet: Snippet): Promise<RedisServer | undefined> {
  return snippet.code.includes('REDIS_URL') ? startRedis({ own: true }) : undefined
}

async function serveAndDeliver(source: Source, framework: string, emulator: Emulator): Promise<string> {
  const { snippet } = source
  const alias = OLDER_MAJORS[framework]?.alias
  let cwd = join(workdir, RUN_PROJECT)
  if (alias !== undefined) {
    // The same file, beside the older major.
    cwd = join(workdir, `user-${alias}`)
    mkdirSync(join(cwd, 'src'), { recursive: true })
    copyFileSync(join(workdir, RUN_PROJECT, source.path), join(cwd, source.path))
  }
  const port = await freePort()
  const redis = await redisFor(snippet)
  const server = await start(source.path, cwd, port, redis === undefined ? {} : { REDIS_URL: redis.url }).catch(async (error: unknown) => {
    await redis?.stop()
    throw error
  })
  counts.servers++
  let seen: string[]
  try {
    seen = await deliverAll(snippet, `http://127.0.0.1:${port}`, emulator, signal)
    counts.deliveries += seen.length
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${server.output().trim()}`)
  } finally {
    await server.stop()
    await redis?.stop()
  }
  return seen.join(' ')
}

/**
 * README.md's `npx -p @hookguard/emulator hookguard send …` lines, run with the installed bin against each of its
 * servers in mode secret: a line followed by a `# NNN …` comment must print that status first.
 * The server gets the secret the README's own `WEBHOOK_SECRET=… npx tsx` line gives it.
 */
async function checkCliLines(sources: readonly Source[]): Promise<void> {
  const text = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const lines = text.split('\n')
  const commands: { line: number; env: Record<string, string>; args: string[]; expect: string }[] = []
  lines.forEach((line, i) => {
    const match = /^((?:[A-Z_]+=\S+\s+)*)npx -p @hookguard\/emulator hookguard (send .*)$/.exec(line.trim())
    const expected = /^#\s*(\d{3}\b.*)$/.exec((lines[i + 1] ?? '').trim())
    if (match === null || expected === null) return
    const env = Object.fromEntries(
      (match[1] as string)
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map((pair) => pair.split('=') as [string, string]),
    )
    commands.push({ line: i + 1, env, args: (match[2] as string).split(/\s+/), expect: expected[1] as string })
  })
  const secret = /WEBHOOK_SECRET=(\S+)\s+npx tsx/.exec(text)?.[1]
  const servers = sources.filter(
    (s) => s.snippet.readme === 'README.md' && s.snippet.kind === 'file' && s.snippet.deliveries.some((d) => d.mode === 'secret'),
  )
  await check(`README.md's \`npx -p @hookguard/emulator hookguard send\` lines against its ${servers.length} servers`, async () => {
    if (commands.length === 0)
      throw new Error('no `npx -p @hookguard/emulator hookguard send …` line with a `# <status>` comment under it in README.md')
    if (secret === undefined) throw new Error('no `WEBHOOK_SECRET=… npx tsx` line in README.md to start the servers with')
    const bin = join(workdir, 'node_modules', '.bin', 'hookguard')
    const tryServer = async (server: Source) => {
      const port = await freePort()
      const running = await start(server.path, join(workdir, RUN_PROJECT), port, { WEBHOOK_SECRET: secret })
      try {
        for (const command of commands) {
          counts.cli++
          const args = command.args.map((arg) => arg.replace('http://localhost:3000', `http://127.0.0.1:${port}`))
          const result = await run(bin, args, { cwd: workdir, signal, env: { PATH: process.env.PATH, NO_COLOR: '1', ...command.env } })
          const first = result.stdout.split('\n')[0]?.trim() ?? ''
          if (!first.startsWith(command.expect.split(/\s+/)[0] as string)) {
            throw new Error(
              `README.md:${command.line} against ${where(server.snippet)} printed "${first}", the README says "${command.expect}"\n${tail(result)}`,
            )
          }
        }
      } finally {
        await running.stop()
      }
    }
    await inParallel(
      servers.map((server) => () => tryServer(server)),
      JOBS,
    )
    return `${commands.length} lines × ${servers.length} servers`
  })
}
