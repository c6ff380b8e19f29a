/**
 * What check-packages.ts, consumer-test.ts and snippet-test.ts share: the public packages, `pnpm pack`, reading a
 * tarball, and running a command with a deadline.
 */
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface Manifest {
  name: string
  version: string
  private?: boolean
  [field: string]: unknown
}

export interface WorkspacePackage {
  name: string
  /** Absolute path of the package folder. */
  dir: string
  manifest: Manifest
}

/** Every package under packages/ that is published, in folder order. */
export function publicPackages(): WorkspacePackage[] {
  const base = join(ROOT, 'packages')
  return readdirSync(base)
    .map((folder) => join(base, folder))
    .filter((dir) => existsSync(join(dir, 'package.json')))
    .map((dir) => {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest
      return { name: manifest.name, dir, manifest }
    })
    .filter(({ manifest }) => manifest.private !== true)
}

export interface RunResult {
  code: number | null
  stdout: string
  stderr: string
  ms: number
}

export interface RunOptions {
  cwd: string
  env?: NodeJS.ProcessEnv
  input?: string
  /** Kills the command (and fails it) when aborted: the scripts' overall deadline. */
  signal?: AbortSignal
}

/** Runs a command without a shell; resolves whatever its exit code, rejects only on abort or spawn failure. */
export function run(command: string, args: readonly string[], { cwd, env, input, signal }: RunOptions): Promise<RunResult> {
  const started = Date.now()
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: env ?? process.env, signal, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }))
    child.stdin.end(input ?? '')
  })
}

/** The last lines of a command's output, for a failure message. */
export function tail(result: RunResult, lines = 30): string {
  const text = `${result.stdout}\n${result.stderr}`.trim().split('\n')
  return text.slice(-lines).join('\n')
}

/** A tool installed at the workspace root (publint, attw, tsc), by its bin name. */
export function rootBin(name: string): string {
  return join(ROOT, 'node_modules', '.bin', name)
}

/**
 * `pnpm pack` of one package into `destination`: pnpm applies `publishConfig` and replaces
 * `workspace:` ranges, so this is the tarball `pnpm publish` (and `changeset publish`) would upload.
 * Resolves the tarball's absolute path.
 */
export async function pack(pkg: WorkspacePackage, destination: string, signal?: AbortSignal): Promise<string> {
  const main = pkg.manifest.main
  if (typeof main === 'string' && !existsSync(join(pkg.dir, main))) {
    throw new Error(`${pkg.name}: ${main} is missing; run \`pnpm build\` first`)
  }
  const result = await run('pnpm', ['pack', '--json', '--pack-destination', destination], { cwd: pkg.dir, signal })
  if (result.code !== 0) throw new Error(`${pkg.name}: pnpm pack failed\n${tail(result)}`)
  const { filename } = JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as { filename: string }
  return filename
}

/**
 * `pnpm pack` of every public package into `destination`, in one pnpm process (`pnpm -r pack`,
 * the packages' folder only): the same tarballs as {@link pack} one by one, in a fraction of the
 * time. Resolves the tarballs' absolute paths by package name.
 */
export async function packAll(destination: string, signal?: AbortSignal): Promise<Map<string, string>> {
  const packages = publicPackages()
  for (const pkg of packages) {
    const main = pkg.manifest.main
    if (typeof main === 'string' && !existsSync(join(pkg.dir, main))) {
      throw new Error(`${pkg.name}: ${main} is missing; run \`pnpm build\` first`)
    }
  }
  const result = await run('pnpm', ['-r', '--filter', './packages/*', 'pack', '--pack-destination', destination], { cwd: ROOT, signal })
  if (result.code !== 0) throw new Error(`pnpm -r pack failed\n${tail(result)}`)
  const tarballs = new Map<string, string>()
  for (const { name, manifest } of packages) {
    const file = join(destination, `${name.replace(/^@/, '').replace('/', '-')}-${manifest.version}.tgz`)
    if (!existsSync(file)) throw new Error(`${name}: pnpm -r pack wrote no ${file}`)
    tarballs.set(name, file)
  }
  return tarballs
}

export interface TarEntry {
  /** Path inside the package, without the leading `package/`. */
  path: string
  mode: number
  content: Buffer
}

/** The files of an npm tarball (ustar, gzipped), read without a tar binary. */
export function readTarball(file: string): TarEntry[] {
  const data = gunzipSync(readFileSync(file))
  const entries: TarEntry[] = []
  const text = (start: number, length: number) =>
    data
      .subarray(start, start + length)
      .toString('utf8')
      .replace(/\0.*$/s, '')
  for (let offset = 0; offset + 512 <= data.length; ) {
    const name = text(offset, 100)
    if (name === '') break
    const mode = Number.parseInt(text(offset + 100, 8).trim() || '0', 8)
    const size = Number.parseInt(text(offset + 124, 12).trim() || '0', 8)
    const type = text(offset + 156, 1)
    const prefix = text(offset + 345, 155)
    const full = prefix ? `${prefix}/${name}` : name
    const body = offset + 512
    if (type === '0' || type === '') {
      entries.push({ path: full.replace(/^package\//, ''), mode, content: data.subarray(body, body + size) })
    }
    offset = body + Math.ceil(size / 512) * 512
  }
  return entries
}
