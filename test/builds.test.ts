import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { staleBuilds } from '@hookguard/testkit/builds'
import { afterEach, describe, expect, it } from 'vitest'

// What runs the built packages (the Next.js test, the benchmarks) builds what is missing or older
// than its source first. A package's declarations are checked against its workspace dependencies'
// published declarations (tsconfig.build.json), so those count as part of its build.

let root = ''
afterEach(() => rmSync(root, { recursive: true, force: true }))

/** A package `name` of a workspace at `root`, its source written at `sourceTime`, depending on `dependencies`. */
function workspacePackage(name: string, sourceTime: number, dependencies: string[], peers: string[] = []): void {
  const dir = join(root, 'packages', name)
  mkdirSync(join(dir, 'src'), { recursive: true })
  const manifest = {
    name: `@hookguard/${name}`,
    dependencies: Object.fromEntries(dependencies.map((d) => [`@hookguard/${d}`, 'workspace:^'])),
    peerDependencies: Object.fromEntries(peers.map((d) => [`@hookguard/${d}`, 'workspace:^'])),
    devDependencies: { '@hookguard/emulator': 'workspace:^' },
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest))
  writeFileSync(join(dir, 'src', 'index.ts'), 'export {}\n')
  for (const file of ['package.json', 'src/index.ts']) utimesSync(join(dir, file), sourceTime, sourceTime)
}

/** `files` of package `name` built at `time`. */
function built(name: string, time: number, files: string[]): void {
  for (const file of files) {
    const path = join(root, 'packages', name, file)
    mkdirSync(join(path, '..'), { recursive: true })
    writeFileSync(path, '')
    utimesSync(path, time, time)
  }
}

describe('staleBuilds', () => {
  it('names a package whose build is missing or older than its source, and leaves a current one', () => {
    root = mkdtempSync(join(tmpdir(), 'hookguard-builds-'))
    workspacePackage('core', 1000, [])
    workspacePackage('fetch', 1000, ['core'])
    workspacePackage('koa', 3000, ['core'])
    built('core', 2000, ['dist/index.js', 'dist/index.d.ts'])
    built('koa', 2000, ['dist/index.js', 'dist/index.d.ts'])
    expect(staleBuilds({ core: ['dist/index.js'] }, root)).toEqual([])
    expect(staleBuilds({ fetch: ['dist/index.js'] }, root)).toEqual(['@hookguard/fetch'])
    expect(staleBuilds({ koa: ['dist/index.js'] }, root)).toEqual(['@hookguard/koa'])
  })

  it('names the workspace packages a stale one depends on whose declarations are missing or older than their source', () => {
    root = mkdtempSync(join(tmpdir(), 'hookguard-builds-'))
    workspacePackage('core', 3000, [])
    workspacePackage('client', 1000, ['core'])
    workspacePackage('redis', 1000, ['core'], ['client'])
    built('core', 2000, ['dist/index.js', 'dist/index.d.ts'])
    // Missing: the client's declarations, which the Redis store's build reads through its peer dependency.
    expect(staleBuilds({ redis: ['dist/index.js'] }, root).sort()).toEqual(['@hookguard/client', '@hookguard/core', '@hookguard/redis'])
    built('core', 4000, ['dist/index.js', 'dist/index.d.ts'])
    built('client', 4000, ['dist/index.js', 'dist/index.d.ts'])
    expect(staleBuilds({ redis: ['dist/index.js'] }, root)).toEqual(['@hookguard/redis'])
  })

  it('ends on packages that depend on each other, and leaves development dependencies alone', () => {
    root = mkdtempSync(join(tmpdir(), 'hookguard-builds-'))
    workspacePackage('a', 1000, ['b'])
    workspacePackage('b', 1000, ['a'])
    workspacePackage('emulator', 1000, [])
    expect(staleBuilds({ a: ['dist/index.js'] }, root).sort()).toEqual(['@hookguard/a', '@hookguard/b'])
  })
})
