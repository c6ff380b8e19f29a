/**
 * The docs' Workers under `wrangler dev`, as a newcomer runs them on this machine's Node (20 in
 * CI, where npm installs wrangler 4.86, the last wrangler for Node 20), from the packed tarballs.
 *
 * For each page that shows a Worker (docs/cloudflare.md, docs/frameworks/hono.md), in a project
 * folder of its own: the page's `wrangler.jsonc`, its first Worker block as `src/index.ts` and
 * its `tsconfig.json`, all as written; the packages its `npm install` lines name, from the
 * tarballs and the registry, in one `npm install` shared by the projects. Then, as
 * docs/cloudflare.md tells the reader:
 *
 * 1. `npx tsc` type-checks the Worker with the page's tsconfig;
 * 2. `npx wrangler dev` without `.dev.vars`: the page's `hookguard send` line gets the 500 the page
 *    explains, and wrangler's terminal shows the setup TypeError the page quotes;
 * 3. `.dev.vars` as the page writes it, `wrangler dev` started again: the page's `hookguard send`
 *    line gets what its `# NNN` comment says (and a second time, with the Durable Object store, a
 *    duplicate's 200), and the same line with another secret gets 401 `invalid_signature`.
 *
 * A compatibility date newer than the installed wrangler's runtime fails step 3 (workerd refuses
 * to start). Bounded by one deadline (HOOKGUARD_WRANGLER_TIMEOUT seconds, default 300); the
 * temporary folder is removed at the end (kept with --keep). Run after `pnpm build`:
 * `pnpm test:workers-dev`.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { packAll, ROOT, run, tail } from './lib/packages.ts'
import { extractSnippets } from './lib/snippets.ts'

const TIMEOUT_S = Number(process.env.HOOKGUARD_WRANGLER_TIMEOUT ?? 300)
const KEEP = process.argv.includes('--keep')
/** The pages with a Worker, and the page that says how to run one locally (its `.dev.vars` and `hookguard send` lines). */
const PAGES = ['docs/cloudflare.md', 'docs/frameworks/hono.md']
const LOCAL_RUN_PAGE = 'docs/cloudflare.md'
/** What the page's 500 section quotes wrangler's terminal showing, for a Worker without its secret. */
const MISSING_SECRET = 'auth.secret must be a non-empty string'
/** What wrangler's terminal must say, not ask: no telemetry, no prompts, no colours. */
const WRANGLER_ENV = { WRANGLER_SEND_METRICS: 'false', CI: 'true', NO_COLOR: '1', FORCE_COLOR: '0' }

const started = Date.now()
const signal = AbortSignal.timeout(TIMEOUT_S * 1000)
const workdir = mkdtempSync(join(tmpdir(), 'hookguard-workers-dev-'))
let passed = 0
let failed = 0

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
      ? `timed out (HOOKGUARD_WRANGLER_TIMEOUT=${TIMEOUT_S})`
      : error instanceof Error
        ? error.message
        : String(error)
    console.log(`✗ ${name}\n    ${message.replaceAll('\n', '\n    ')}`)
    return false
  }
}

interface Block {
  lang: string
  line: number
  text: string
}

/** The fenced blocks of a Markdown text, with the 1-based line of their opening fence. */
function blocks(markdown: string): Block[] {
  const found: Block[] = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i] as string)
    if (open === null) continue
    let end = i + 1
    while (end < lines.length && lines[end] !== '```') end++
    found.push({ lang: open[1] as string, line: i + 1, text: `${lines.slice(i + 1, end).join('\n')}\n` })
    i = end
  }
  return found
}

/** A `hookguard send` line of the page's `sh` blocks, with the `# NNN` comment under it. */
interface SendLine {
  line: string
  env: Record<string, string>
  args: string[]
  expect: string
}

interface Page {
  file: string
  worker: string
  wrangler: string
  tsconfig: string
  /** Registry packages its `npm install` lines name (@hookguard/* come from the tarballs). */
  packages: string[]
  devVars?: string
  send?: SendLine
}

/** The Worker of a page and what goes around it: the blocks of the `##` section that holds it. */
function readPage(file: string): Page {
  const markdown = readFileSync(join(ROOT, file), 'utf8')
  const worker = extractSnippets(markdown, file).snippets.find((s) => s.env === 'workers' && s.kind === 'file')
  if (worker === undefined) throw new Error(`${file}: no <!-- snippet: file env=workers --> block`)
  const lines = markdown.split('\n')
  let sectionStart = 0
  for (let i = 0; i < worker.line; i++) if ((lines[i] as string).startsWith('## ')) sectionStart = i + 1
  const nextSection = lines.findIndex((line, i) => i >= worker.line && line.startsWith('## '))
  const inSection = (b: Block) => b.line > sectionStart && (nextSection === -1 || b.line <= nextSection)
  const all = blocks(markdown)
  const section = all.filter(inSection)
  const wrangler = section.find((b) => b.lang === 'jsonc' && b.text.includes('"compatibility_date"'))
  const tsconfig = section.find((b) => b.lang === 'json' && b.text.includes('"compilerOptions"'))
  if (wrangler === undefined) throw new Error(`${file}: no wrangler.jsonc block beside its Worker`)
  if (tsconfig === undefined) throw new Error(`${file}: no tsconfig.json block beside its Worker`)
  const packages = section
    .filter((b) => b.lang === 'sh')
    .flatMap((b) => b.text.split('\n'))
    .filter((line) => line.startsWith('npm install '))
    .flatMap((line) => line.replace(/#.*$/, '').trim().split(/\s+/).slice(2))
    .filter((word) => !word.startsWith('-') && !word.startsWith('@hookguard/'))
  if (!packages.includes('wrangler')) throw new Error(`${file}: its npm install lines do not install wrangler`)
  const devVars = all.find((b) => b.lang === 'text' && /^WEBHOOK_SECRET=\S+\n$/.test(b.text))?.text
  return { file, worker: worker.code, wrangler: wrangler.text, tsconfig: tsconfig.text, packages, devVars, send: sendLine(all) }
}

function sendLine(all: Block[]): SendLine | undefined {
  for (const block of all.filter((b) => b.lang === 'sh')) {
    const lines = block.text.split('\n')
    for (const [i, line] of lines.entries()) {
      const match = /^((?:[A-Z_]+=\S+\s+)*)npx -p @hookguard\/emulator hookguard (send .*)$/.exec(line.trim())
      const expected = /^#\s*(\d{3})\b/.exec((lines[i + 1] ?? '').trim())
      if (match === null || expected === null) continue
      const env = Object.fromEntries(
        (match[1] as string)
          .trim()
          .split(/\s+/)
          .filter(Boolean)
          .map((pair) => pair.split('=') as [string, string]),
      )
      return { line: line.trim(), env, args: (match[2] as string).split(/\s+/), expect: expected[1] as string }
    }
  }
  return undefined
}

/** The environment without the npm_config_* variables a `pnpm` script sets, which npx warns about line by line. */
function npmFree(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.toLowerCase().startsWith('npm_config_')))
}

function write(path: string, text: string): void {
  const file = join(workdir, path)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, text)
}

interface Dev {
  origin: string
  output(): string
  stop(): Promise<void>
}

/** `npx wrangler dev` in the project, on a port of its choosing; resolves once it says it is ready. */
async function wranglerDev(project: string): Promise<Dev> {
  // Its own process group: npx starts wrangler, which starts workerd; stopping the group stops all three.
  const child: ChildProcess = spawn('npx', ['wrangler', 'dev', '--ip', '127.0.0.1', '--port', '0', '--inspector-port', '0'], {
    cwd: join(workdir, project),
    env: { ...npmFree(process.env), ...WRANGLER_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let output = ''
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGTERM')
      } catch {}
      const killed = setTimeout(() => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
        } catch {}
      }, 5000)
      await exited
      clearTimeout(killed)
    }
  }
  const ready = new Promise<string>((resolve, reject) => {
    const read = (chunk: string) => {
      output += chunk
      const url = /Ready on (http:\/\/\S+)/.exec(output)?.[1]
      if (url !== undefined) resolve(url)
    }
    child.stdout?.setEncoding('utf8').on('data', read)
    child.stderr?.setEncoding('utf8').on('data', read)
    void exited.then(() => reject(new Error(`wrangler dev exited before it was ready\n${output.trim()}`)))
    const onAbort = () => reject(new Error(`wrangler dev was not ready in time\n${output.trim()}`))
    signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    const origin = new URL(await ready).origin
    return { origin, output: () => output, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

/** The page's `hookguard send` line against the running Worker; resolves the first line it printed. */
async function send(line: SendLine, origin: string, env: Record<string, string> = {}): Promise<string> {
  const args = line.args.map((arg) => arg.replace(/^http:\/\/localhost:8787/, origin))
  const result = await run('npx', ['-p', '@hookguard/emulator', 'hookguard', ...args], {
    cwd: workdir,
    signal,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...line.env, ...env },
  })
  return result.stdout.split('\n')[0]?.trim() ?? `(nothing printed, exit ${result.code})\n${tail(result)}`
}

function expectStatus(first: string, status: string, what: string, dev: Dev): void {
  if (!first.startsWith(status)) throw new Error(`${what}: printed "${first}", expected ${status}\nwrangler dev:\n${dev.output().trim()}`)
}

try {
  const pages = PAGES.map(readPage)
  const local = pages.find((page) => page.file === LOCAL_RUN_PAGE)
  const devVars = local?.devVars
  const line = local?.send
  if (devVars === undefined) throw new Error(`${LOCAL_RUN_PAGE}: no \`\`\`text block with the WEBHOOK_SECRET=… line of .dev.vars`)
  if (line === undefined) {
    throw new Error(`${LOCAL_RUN_PAGE}: no \`npx -p @hookguard/emulator hookguard send …\` line followed by a \`# <status>\` comment`)
  }

  const tarballs = new Map<string, string>()
  await check('pack every package', async () => {
    mkdirSync(join(workdir, 'tarballs'))
    for (const [name, file] of await packAll(join(workdir, 'tarballs'), signal)) tarballs.set(name, file)
    return [...tarballs.keys()].join(', ')
  })
  const registry = [...new Set(pages.flatMap((page) => page.packages))]
  let wranglerVersion = ''
  const installed = await check(`npm install the tarballs and what the pages' npm install lines name`, async () => {
    write('package.json', `${JSON.stringify({ name: 'workers-dev', private: true, type: 'module' }, null, 2)}\n`)
    const args = ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs.values(), ...registry]
    const result = await run('npm', args, { cwd: workdir, signal })
    if (result.code !== 0) throw new Error(`npm install exited ${result.code}\n${tail(result)}`)
    wranglerVersion = (JSON.parse(readFileSync(join(workdir, 'node_modules/wrangler/package.json'), 'utf8')) as { version: string }).version
    return `${registry.join(', ')}; wrangler ${wranglerVersion} on Node ${process.versions.node}`
  })
  if (!installed) throw new Error('install failed; nothing to test')

  for (const page of pages) {
    const project = page.file.replace(/\.md$/, '').replace(/[^\w-]+/g, '-')
    write(`${project}/wrangler.jsonc`, page.wrangler)
    write(`${project}/src/index.ts`, page.worker)
    write(`${project}/tsconfig.json`, page.tsconfig)
    const date = /"compatibility_date":\s*"([^"]+)"/.exec(page.wrangler)?.[1]
    const dedupe = page.wrangler.includes('"durable_objects"')

    await check(`${page.file}: npx tsc type-checks the Worker with the page's tsconfig.json`, async () => {
      const result = await run('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: join(workdir, project), signal, env: npmFree(process.env) })
      if (result.code !== 0) throw new Error(`tsc exited ${result.code}\n${tail(result)}`)
      return undefined
    })
    await check(`${page.file}: wrangler dev without .dev.vars: 500, and the terminal names the missing secret`, async () => {
      const dev = await wranglerDev(project)
      try {
        expectStatus(await send(line, dev.origin), '500', line.line, dev)
        // The exception reaches wrangler's terminal a moment after the answer.
        for (let i = 0; i < 50 && !dev.output().includes(MISSING_SECRET); i++) await new Promise((r) => setTimeout(r, 100))
        if (!dev.output().includes(MISSING_SECRET)) throw new Error(`wrangler dev did not show "${MISSING_SECRET}"\n${dev.output().trim()}`)
      } finally {
        await dev.stop()
      }
      return undefined
    })
    write(`${project}/.dev.vars`, devVars)
    await check(
      `${page.file}: wrangler ${wranglerVersion} dev, compatibility date ${date}, .dev.vars: ${line.expect}${dedupe ? ', then a duplicate 200' : ''}; another secret 401`,
      async () => {
        const dev = await wranglerDev(project)
        try {
          expectStatus(await send(line, dev.origin), line.expect, line.line, dev)
          if (dedupe) expectStatus(await send(line, dev.origin), '200', `${line.line}, sent again`, dev)
          expectStatus(await send(line, dev.origin, { HOOKGUARD_SECRET: 'not-the-secret' }), '401', 'another secret', dev)
        } finally {
          await dev.stop()
        }
        return dev.origin
      },
    )
  }
} catch (error) {
  failed++
  console.log(`✗ ${error instanceof Error ? error.message : String(error)}`)
} finally {
  if (KEEP) console.log(`kept ${workdir}`)
  else rmSync(workdir, { recursive: true, force: true })
}
console.log(`workers dev: ${passed} passed, ${failed} failed (${((Date.now() - started) / 1000).toFixed(1)} s)`)
process.exitCode = failed === 0 ? 0 : 1
