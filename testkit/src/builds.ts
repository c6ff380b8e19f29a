import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The workspace's root folder. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/**
 * Of the workspace packages named (`core`, `fetch`…, each with the files its build writes, relative
 * to its folder), those whose build is missing or older than their source or `package.json`; and
 * the workspace packages they depend on whose declarations are, since a package's build checks its
 * sources against those (tsconfig.build.json). For what runs the built packages as users do
 * (benchmarks, a real framework's own bundler).
 */
export function staleBuilds(packages: Readonly<Record<string, readonly string[]>>, root = ROOT): string[] {
  const checked = new Map<string, readonly string[]>(Object.entries(packages))
  for (const name of checked.keys()) {
    for (const dependency of workspaceDependencies(join(root, 'packages', name))) {
      if (!checked.has(dependency)) checked.set(dependency, ['dist/index.d.ts'])
    }
  }
  return [...checked].filter(([name, built]) => isStale(join(root, 'packages', name), built)).map(([name]) => `@hookguard/${name}`)
}

function isStale(dir: string, built: readonly string[]): boolean {
  const source = Math.max(newestMtime(join(dir, 'src')), statSync(join(dir, 'package.json')).mtimeMs)
  return built.some((file) => !existsSync(join(dir, file)) || statSync(join(dir, file)).mtimeMs < source)
}

/** The `@hookguard/…` packages a package depends on, by folder name. */
function workspaceDependencies(dir: string): string[] {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>
  const names = ['dependencies', 'peerDependencies'].flatMap((field) => Object.keys(manifest[field] ?? {}))
  return names.filter((name) => name.startsWith('@hookguard/')).map((name) => name.slice('@hookguard/'.length))
}

/** Builds the packages `staleBuilds` named, with pnpm, as `pnpm build` would: each after those it depends on. */
export function build(packages: readonly string[]): void {
  if (packages.length === 0) return
  execFileSync('pnpm', [...packages.flatMap((name) => ['--filter', name]), 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] })
}

function newestMtime(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs)
  }
  return newest
}
