import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// The house rule of CONTRIBUTING.md's map: a module imports only rooms below it, so that each can be
// read, tested and moved without the ones above. Type-only imports count too: a circle of types is
// still a circle for a reader, and it is how the core's last one grew.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const PLACES = ['packages', 'testkit/src', 'bench', 'load', 'scripts', 'runtimes/suite', 'examples']
const SKIP = new Set(['node_modules', 'dist', 'test', '.next', 'coverage'])
const RELATIVE_IMPORT = /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]/g

function sources(folder: string, found: string[] = []): string[] {
  let names: string[]
  try {
    names = readdirSync(folder)
  } catch {
    return found
  }
  for (const name of names) {
    if (SKIP.has(name)) continue
    const path = join(folder, name)
    if (statSync(path).isDirectory()) sources(path, found)
    else if (/\.(ts|tsx|mts)$/.test(name) && !/\.(test|spec|d)\.ts$/.test(name)) found.push(path)
  }
  return found
}

function importsOf(file: string, known: Set<string>): string[] {
  const text = readFileSync(file, 'utf8')
  const targets: string[] = []
  for (const [, specifier] of text.matchAll(RELATIVE_IMPORT)) {
    const target = resolve(dirname(file), specifier as string)
    for (const candidate of [target, `${target}.ts`, join(target, 'index.ts')]) {
      if (known.has(candidate)) {
        targets.push(candidate)
        break
      }
    }
  }
  return targets
}

/** Every circle, as the files it passes through (depth-first, one circle per back edge). */
function circlesOf(graph: Map<string, string[]>): string[][] {
  const circles: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const visit = (file: string): void => {
    state.set(file, 'open')
    path.push(file)
    for (const next of graph.get(file) ?? []) {
      const seen = state.get(next)
      if (seen === 'open') circles.push([...path.slice(path.indexOf(next)), next])
      else if (seen === undefined) visit(next)
    }
    path.pop()
    state.set(file, 'done')
  }
  for (const file of graph.keys()) if (!state.has(file)) visit(file)
  return circles
}

describe('the import graph', () => {
  it('finds a circle when there is one', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ])
    expect(circlesOf(graph)).toEqual([['a', 'b', 'c', 'a']])
  })

  it('has no circle in the packages, the testkit, the benchmarks or the scripts', () => {
    const files = PLACES.flatMap((place) => sources(join(ROOT, place)))
    const known = new Set(files)
    const graph = new Map(files.map((file) => [file, importsOf(file, known)]))
    expect(files.length).toBeGreaterThan(100)
    const circles = circlesOf(graph).map((circle) => circle.map((file) => relative(ROOT, file)).join(' -> '))
    expect(circles).toEqual([])
  })
})
