/**
 * Packs every public package as `pnpm publish` would and checks what would be published:
 *
 * - our own rules: the tarball holds dist, README.md, LICENSE and package.json only; its manifest
 *   has no `@hookguard/source` condition, no `src` path, no `imports` map and no `workspace:` range;
 *   `publishConfig.exports` is `exports` without the source condition; the bin keeps its shebang
 *   and is executable; every package a declaration or bundle imports is a dependency or a peer
 *   (an untyped peer with its `@types` as an optional peer); the Web build imports no Node built-in;
 * - publint (every message, suggestions included, fails the check);
 * - attw with its default `strict` profile and no rule ignored: node10, node16 from CJS and from
 *   ESM, and bundler must all resolve with no problem;
 * - `pnpm -r pack` at the root packs exactly the public packages: pnpm packs a private package too
 *   whenever it has a version, so the workspace's own (the testkit) must have none.
 *
 * Run after `pnpm build`: `pnpm check:packages`. Exits 1 on any problem.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { tmpdir } from 'node:os'
import { join, posix } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { publint } from 'publint'
import { formatMessage } from 'publint/utils'
import {
  type Manifest,
  pack,
  publicPackages,
  ROOT,
  readTarball,
  rootBin,
  run,
  type TarEntry,
  tail,
  type WorkspacePackage,
} from './lib/packages.ts'

const SOURCE_CONDITION = '@hookguard/source'
/** Files a tarball may hold besides dist/. */
const ALLOWED_TOP_LEVEL = new Set(['package.json', 'README.md', 'LICENSE'])
/** Manifest fields that name files the package ships. */
const PATH_FIELDS = ['exports', 'imports', 'main', 'module', 'types', 'typings', 'bin', 'browser']
const TIMEOUT_MS = 180_000
/** What types the Workers runtime's modules (`cloudflare:workers`). */
const WORKERS_TYPES = '@cloudflare/workers-types'

interface Report {
  name: string
  problems: string[]
  notes: string[]
}

const started = Date.now()
const signal = AbortSignal.timeout(TIMEOUT_MS)
const workdir = mkdtempSync(join(tmpdir(), 'hookguard-check-'))
let failed = 0
try {
  const packages = publicPackages()
  const reports = await Promise.all([...packages.map((pkg) => checkPackage(pkg)), checkRecursivePack(packages)])
  for (const { name, problems, notes } of reports) {
    const verdict = problems.length === 0 ? 'ok' : `${problems.length} problem(s)`
    console.log(`\n${name}: ${verdict}`)
    for (const note of notes) console.log(`  ${note}`)
    for (const problem of problems) console.log(`  ✗ ${problem.replaceAll('\n', '\n    ')}`)
    if (problems.length > 0) failed++
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  console.log(`\ncheck-packages: ${reports.length - failed} passed, ${failed} failed (${seconds} s)`)
} catch (error) {
  failed++
  console.error(signal.aborted ? `check-packages: timed out after ${TIMEOUT_MS / 1000} s` : error)
} finally {
  rmSync(workdir, { recursive: true, force: true })
}
process.exitCode = failed === 0 ? 0 : 1

async function checkPackage(pkg: WorkspacePackage): Promise<Report> {
  const report: Report = { name: pkg.name, problems: [], notes: [] }
  const destination = mkdtempSync(join(workdir, 'pack-'))
  let tarball: string
  try {
    tarball = await pack(pkg, destination, signal)
  } catch (error) {
    report.problems.push(String(error instanceof Error ? error.message : error))
    return report
  }
  const entries = readTarball(tarball)
  const packed = JSON.parse(entry(entries, 'package.json')?.content.toString('utf8') ?? '{}') as Manifest
  report.notes.push(`${entries.length} files, ${(entries.reduce((sum, e) => sum + e.content.length, 0) / 1024).toFixed(0)} KiB unpacked`)

  checkRepoManifest(pkg, report)
  checkPackedManifest(packed, entries, report)
  checkImports(pkg, packed, entries, report)
  await Promise.all([runPublint(tarball, report), runAttw(tarball, report)])
  return report
}

/**
 * `pnpm -r pack`, as a maintainer types it: pnpm packs every workspace package that has a name and
 * a version, private or not (`private` only stops `publish`). Only the public ones may come out.
 */
async function checkRecursivePack(packages: readonly WorkspacePackage[]): Promise<Report> {
  const report: Report = { name: '`pnpm -r pack` at the root', problems: [], notes: [] }
  const destination = mkdtempSync(join(workdir, 'recursive-'))
  const result = await run('pnpm', ['-r', 'pack', '--pack-destination', destination], { cwd: ROOT, signal })
  if (result.code !== 0) {
    report.problems.push(`pnpm -r pack exited ${result.code}\n${tail(result)}`)
    return report
  }
  const packed = readdirSync(destination).sort()
  const expected = packages.map(({ manifest }) => `${manifest.name.replace(/^@/, '').replace('/', '-')}-${manifest.version}.tgz`).sort()
  for (const file of packed.filter((file) => !expected.includes(file))) report.problems.push(`packs ${file}, which is not a public package`)
  for (const file of expected.filter((file) => !packed.includes(file))) report.problems.push(`does not pack ${file}`)
  report.notes.push(`${packed.length} tarballs: ${packed.join(', ')}`)
  return report
}

/** The manifest in the repository: the published exports are the repository's minus the source condition. */
function checkRepoManifest({ manifest, dir }: WorkspacePackage, { problems }: Report): void {
  const expected = withoutCondition(manifest.exports, SOURCE_CONDITION)
  const published = (manifest.publishConfig as { exports?: unknown } | undefined)?.exports
  if (!isDeepStrictEqual(published, expected)) {
    problems.push('publishConfig.exports must equal exports without the "@hookguard/source" condition (edit both together)')
  }
  if (manifest.sideEffects !== false) problems.push('sideEffects must be false')
  if ((manifest.engines as { node?: string } | undefined)?.node !== '>=20') problems.push('engines.node must be ">=20"')
  if (manifest.license !== 'MIT') problems.push('license must be "MIT"')
  for (const file of ['README.md', 'LICENSE']) if (!existsSync(join(dir, file))) problems.push(`${file} is missing`)
}

/** The manifest and files in the tarball. */
function checkPackedManifest(packed: Manifest, entries: TarEntry[], { problems, notes }: Report): void {
  const text = JSON.stringify(packed)
  if (text.includes(SOURCE_CONDITION)) problems.push(`the published package.json still names "${SOURCE_CONDITION}"`)
  if (text.includes('workspace:')) problems.push('the published package.json still has a workspace: range')
  for (const field of PATH_FIELDS) {
    if (/["/]src\//.test(JSON.stringify(packed[field] ?? null))) problems.push(`published "${field}" points into src/`)
  }
  // The bundles inline `#crypto` and `#bytes`; a published imports map could only point at files not shipped.
  if (packed.imports !== undefined && !isDeepStrictEqual(packed.imports, {})) problems.push('the published package.json has an imports map')
  for (const { path } of entries) {
    if (!path.startsWith('dist/') && !ALLOWED_TOP_LEVEL.has(path)) problems.push(`ships ${path}, which is neither dist/ nor README/LICENSE`)
  }
  for (const file of ALLOWED_TOP_LEVEL) if (!entry(entries, file)) problems.push(`the tarball has no ${file}`)
  for (const target of pathsIn(packed)) {
    if (!entry(entries, target.replace(/^\.\//, ''))) problems.push(`package.json names ${target}, which the tarball lacks`)
  }
  const bins = typeof packed.bin === 'string' ? { [packed.name]: packed.bin } : ((packed.bin ?? {}) as Record<string, string>)
  for (const [command, target] of Object.entries(bins)) {
    const file = entry(entries, target.replace(/^\.\//, ''))
    if (!file) continue
    if (!file.content.subarray(0, 20).toString('utf8').startsWith('#!/usr/bin/env node'))
      problems.push(`bin ${command}: ${target} has no shebang`)
    if ((file.mode & 0o111) === 0) problems.push(`bin ${command}: ${target} is not executable`)
    else notes.push(`bin ${command} → ${target} (mode ${file.mode.toString(8)}, shebang ok)`)
  }
}

/**
 * What the published files import must be installable from the manifest: a bare import in a bundle
 * is a dependency, a peer or a Node built-in; one in a declaration is a dependency or a peer, and
 * an untyped one brings its `@types` package as a (preferably optional) peer. The Workers
 * runtime's own modules (`cloudflare:workers`) are no package: they are typed by
 * `@cloudflare/workers-types`, which must then be an optional peer.
 */
function checkImports(pkg: WorkspacePackage, packed: Manifest, entries: TarEntry[], { problems, notes }: Report): void {
  const deps = { ...(packed.dependencies as object), ...(packed.peerDependencies as object) } as Record<string, string>
  const optional = (packed.peerDependenciesMeta ?? {}) as Record<string, { optional?: boolean }>
  const typeImports = new Set<string>()
  const workersModules = new Set<string>()
  const shipped = new Set(entries.map((entry) => entry.path))
  for (const { path, content } of entries) {
    const isDeclaration = /\.d\.[cm]?ts$/.test(path)
    if (!isDeclaration && !/\.[cm]?js$/.test(path)) continue
    for (const specifier of importsOf(content.toString('utf8'))) {
      if (specifier.startsWith('#')) problems.push(`${path} imports ${specifier}: subpath imports must be bundled`)
      // A file the code imports, the edge build's strip.wasm among them (`./strip.wasm?module`), ships beside it.
      const target = posix.join(posix.dirname(path), specifier.replace(/\?.*$/, ''))
      if (specifier.startsWith('.') && !isDeclaration && !shipped.has(target))
        problems.push(`${path} imports ${specifier}, which the tarball lacks`)
      if (specifier.startsWith('.') || specifier.startsWith('#')) continue
      const builtin = specifier.startsWith('node:') || builtinModules.includes(specifier)
      if (builtin && /^dist\/(web|edge)\//.test(path)) problems.push(`${path} (the ${path.split('/')[1]} build) imports ${specifier}`)
      if (builtin) continue
      if (specifier.startsWith('cloudflare:')) {
        if (optional[WORKERS_TYPES]?.optional !== true || !(WORKERS_TYPES in (packed.peerDependencies as object))) {
          problems.push(`${path} imports ${specifier}: make ${WORKERS_TYPES}, which types it, an optional peer`)
        } else if (isDeclaration) workersModules.add(specifier)
        continue
      }
      const name = packageName(specifier)
      if (name === packed.name) continue
      if (!(name in deps)) problems.push(`${path} imports ${specifier}, but ${name} is neither a dependency nor a peer dependency`)
      if (isDeclaration) typeImports.add(name)
    }
  }
  if (workersModules.size > 0) {
    notes.push(`declarations import ${[...workersModules].join(', ')}; types from the optional peer ${WORKERS_TYPES}`)
  }
  for (const name of typeImports) {
    if (shipsTypes(pkg, name)) continue
    const typesPackage = `@types/${name.replace(/^@/, '').replace('/', '__')}`
    if (!(typesPackage in deps))
      problems.push(`the declarations import ${name}, which has no types of its own: add ${typesPackage} as a peer`)
    else if (typesPackage in (packed.peerDependencies as object) && optional[typesPackage]?.optional !== true) {
      problems.push(`${typesPackage} should be an optional peer (peerDependenciesMeta), since JavaScript users need no types`)
    } else notes.push(`declarations import ${name}; types from the optional peer ${typesPackage}`)
  }
}

async function runPublint(tarball: string, { problems, notes }: Report): Promise<void> {
  const data = readFileSync(tarball)
  const buffer = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer
  const { messages, pkg } = await publint({ pack: { tarball: buffer }, level: 'suggestion', strict: true })
  for (const message of messages) problems.push(`publint ${message.type}: ${formatMessage(message, pkg, { color: false })}`)
  if (messages.length === 0) notes.push('publint: no errors, warnings or suggestions')
}

interface AttwResolution {
  resolution?: { fileName: string }
  implementationResolution?: { fileName: string }
}
interface AttwJson {
  analysis: {
    problems?: { kind: string; entrypoint?: string; resolutionKind?: string }[]
    entrypoints: Record<string, { resolutions: Record<string, AttwResolution> }>
  }
}

async function runAttw(tarball: string, { problems, notes }: Report): Promise<void> {
  // The packages ship their own declarations: no DefinitelyTyped lookup, so no network.
  const result = await run(rootBin('attw'), [tarball, '--format', 'json', '--no-definitely-typed', '--profile', 'strict'], {
    cwd: workdir,
    signal,
    env: { ...process.env, FORCE_COLOR: '0' },
  })
  let json: AttwJson
  try {
    json = JSON.parse(result.stdout) as AttwJson
  } catch {
    problems.push(`attw did not answer JSON (exit ${result.code})\n${tail(result)}`)
    return
  }
  for (const problem of json.analysis.problems ?? []) {
    problems.push(
      `attw ${problem.kind}${problem.entrypoint ? ` at ${problem.entrypoint}` : ''}${problem.resolutionKind ? ` (${problem.resolutionKind})` : ''}`,
    )
  }
  if (result.code !== 0 && (json.analysis.problems ?? []).length === 0) problems.push(`attw exited ${result.code}\n${tail(result)}`)
  const root = json.analysis.entrypoints['.']
  if (root) {
    const strip = (file?: string) => file?.replace(/^\/node_modules\/[^/]+\/[^/]+\//, '') ?? 'unresolved'
    for (const [kind, { resolution, implementationResolution }] of Object.entries(root.resolutions)) {
      notes.push(`attw ${kind.padEnd(10)} types ${strip(resolution?.fileName).padEnd(16)} js ${strip(implementationResolution?.fileName)}`)
    }
  }
}

function entry(entries: TarEntry[], path: string): TarEntry | undefined {
  return entries.find((e) => e.path === path)
}

function withoutCondition(value: unknown, condition: string): unknown {
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== condition)
      .map(([key, inner]) => [key, withoutCondition(inner, condition)]),
  )
}

/** Every relative file path the manifest's path fields name. */
function pathsIn(manifest: Manifest): string[] {
  const found: string[] = []
  const walk = (value: unknown) => {
    if (typeof value === 'string' && value.startsWith('./')) found.push(value)
    else if (typeof value === 'object' && value !== null) for (const inner of Object.values(value)) walk(inner)
  }
  for (const field of PATH_FIELDS) walk(manifest[field])
  if (typeof manifest.main === 'string' && !manifest.main.startsWith('./')) found.push(manifest.main)
  return found.filter((path) => path !== './package.json')
}

function importsOf(code: string): string[] {
  const found = new Set<string>()
  // A keyword that another word, a quote or a dash runs into is text ('wasm-import', `via: "import"`), not a statement.
  const keyword = (word: string) => `(?<![\\w$'"\`.-])${word}`
  const patterns = [
    new RegExp(`${keyword('from')}\\s*['"]([^'"]+)['"]`, 'g'),
    new RegExp(`${keyword('import')}\\s*['"]([^'"]+)['"]`, 'g'),
    new RegExp(`${keyword('(?:require|import)')}\\s*\\(\\s*['"]([^'"]+)['"]\\s*\\)`, 'g'),
  ]
  for (const pattern of patterns) for (const match of code.matchAll(pattern)) found.add(match[1] as string)
  return [...found]
}

function packageName(specifier: string): string {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string)
}

/** Whether an imported package ships declarations, judged from the copy installed for the workspace package. */
function shipsTypes(pkg: WorkspacePackage, name: string): boolean {
  const file = join(pkg.dir, 'node_modules', name, 'package.json')
  if (!existsSync(file)) return true // not installed here (a workspace sibling): ours always ship types
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as Manifest
  return manifest.types !== undefined || manifest.typings !== undefined || JSON.stringify(manifest.exports ?? {}).includes('"types"')
}
