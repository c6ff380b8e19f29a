import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The workspace's root folder. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/**
 * Of the workspace packages named (`core`, `fetch`…, each with the files its build writes, relative
 * to its folder), those whose build is missing or older than their source or `package.json`.
 * For what runs the built packages as users do (benchmarks, a real framework's own bundler).
 */
export function staleBuilds(packages: Readonly<Record<string, readonly string[]>>): string[] {
  const stale: string[] = []
  for (const [name, built] of Object.entries(packages)) {
    const dir = join(ROOT, 'packages', name)
    const source = Math.max(newestMtime(join(dir, 'src')), statSync(join(dir, 'package.json')).mtimeMs)
    if (built.some((file) => !existsSync(join(dir, file)) || statSync(join(dir, file)).mtimeMs < source)) stale.push(`@hookguard/${name}`)
  }
  return stale
}

/** Builds the packages `staleBuilds` named, with pnpm, as `pnpm build` would. */
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
