import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { readmeFiles } from '../scripts/lib/snippets.ts'

// `npx NAME` runs the bin NAME if the project has it, and otherwise downloads and runs whatever the
// registry holds under the package name NAME. The `hookguard` command is a bin of
// @hookguard/emulator; the unscoped name `hookguard` is not ours, so on a path where the emulator
// is not installed (a Next.js app, a Worker project) `npx hookguard` runs a stranger's code on the
// reader's machine. Every command line the docs, the READMEs and the examples show must name the
// package it runs: one we publish, a tool whose package has the bin's name, or one the page
// installs first.

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** Tools whose npm package bears the bin's name: `npx NAME` runs that tool, installed or not. */
const TOOLS = new Set(['tsx', 'wrangler', 'next', 'create-next-app', 'vitest'])
/**
 * Bins whose package has another name: allowed where the page installs that package before it
 * (the unscoped package `tsc` is not TypeScript).
 */
const BIN_PACKAGES: Record<string, string> = { tsc: 'typescript' }

interface Published {
  /** The package names. */
  names: Set<string>
  /** Each bin of theirs, by name, and the package it belongs to: `hookguard` → `@hookguard/emulator`. */
  bins: Map<string, string>
}

/** The packages this repository publishes, and their bins. */
function ourPackages(): Published {
  const base = join(ROOT, 'packages')
  const manifests = readdirSync(base)
    .map((folder) => join(base, folder, 'package.json'))
    .filter((file) => existsSync(file))
    .map((file) => JSON.parse(readFileSync(file, 'utf8')) as { name: string; private?: boolean; bin?: Record<string, string> })
    .filter((manifest) => manifest.private !== true)
  return {
    names: new Set(manifests.map((manifest) => manifest.name)),
    bins: new Map(manifests.flatMap((manifest) => Object.keys(manifest.bin ?? {}).map((bin) => [bin, manifest.name] as const))),
  }
}

/** A package spec without its version: `create-next-app@latest` → `create-next-app`, `@a/b@1` → `@a/b`. */
const packageName = (spec: string) => spec.replace(/(?<=.)@.*$/, '')

/** `npx`, its options (`-p PKG`, `--package=PKG`, `-y`), then the command. */
const NPX = /(?<![\w-])npx((?:\s+(?:(?:-p|--package)(?:\s+|=)[^\s`'"]+|-y|--yes))*)\s+([^\s`'"()-][^\s`'"()]*)/g

/**
 * The code of a Markdown text: its fenced blocks and inline code spans, the prose blanked out
 * (line numbers kept), so that a sentence about npx is not read as a command.
 */
export function codeOf(markdown: string): string {
  let fence: string | undefined
  return markdown
    .split('\n')
    .map((line) => {
      const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
      if (fence !== undefined) {
        if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined
        return line
      }
      if (marker !== undefined) {
        fence = marker
        return ''
      }
      return line.replace(/`[^`]*`|[^`]+/g, (part) => (part.startsWith('`') ? part : ' '.repeat(part.length)))
    })
    .join('\n')
}

export interface CommandProblem {
  line: number
  command: string
  problem: string
}

/** The `npx` commands of one text that do not say which package they run. */
export function checkNpxCommands(text: string, published: Published): { commands: number; problems: CommandProblem[] } {
  const problems: CommandProblem[] = []
  let commands = 0
  for (const match of text.matchAll(NPX)) {
    commands++
    const [command, options = '', bin = ''] = match
    const before = text.slice(0, match.index)
    const line = before.split('\n').length
    const packages = [...options.matchAll(/(?:-p|--package)(?:\s+|=)([^\s`'"]+)/g)].map((m) => packageName(m[1] as string))
    const report = (problem: string) => problems.push({ line, command: command.trim(), problem })
    if (packages.length > 0) {
      for (const name of packages) {
        if (!published.names.has(name) && !TOOLS.has(name)) report(`-p ${name}: not a package we publish nor a known tool`)
      }
      continue
    }
    const name = packageName(bin)
    if (published.names.has(name) || TOOLS.has(name)) continue
    const needs = BIN_PACKAGES[name]
    if (needs !== undefined) {
      if (!new RegExp(`npm (?:install|i)\\b[^\\n\`]*\\s${needs}(?:@\\S*)?(?=\\s|$|\`)`, 'm').test(before)) {
        report(`${name} is a bin of ${needs}: install ${needs} on the page before it, or write npx -p ${needs} ${name}`)
      }
      continue
    }
    const ours = published.bins.get(name)
    report(
      ours === undefined
        ? `"${name}" is not a package we publish nor a known tool: npx would run whatever the registry holds under that name`
        : `the package "${name}" is not ours: write npx -p ${ours} ${name}`,
    )
  }
  return { commands, problems }
}

/** What of a file may hold a command: a Markdown page's code, a source file whole. */
function commandText(file: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8')
  return file.endsWith('.md') ? codeOf(text) : text
}

/** The examples' text files (sources, configs, notes), without installed or built folders. */
function exampleFiles(folder = 'examples'): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true })
    .filter((entry) => !['node_modules', '.next', 'dist'].includes(entry.name))
    .flatMap((entry) => {
      const path = `${folder}/${entry.name}`
      if (entry.isDirectory()) return exampleFiles(path)
      return /\.(?:[cm]?[jt]sx?|json|md)$/.test(entry.name) ? [path] : []
    })
}

describe('the command lines of the docs, the READMEs and the examples', () => {
  const published = ourPackages()

  it('find the hookguard command without its package, and accept it with', () => {
    const bare = checkNpxCommands('HOOKGUARD_SECRET=… npx hookguard send http://localhost:3000/webhooks', published)
    expect(bare.problems).toEqual([
      { line: 1, command: 'npx hookguard', problem: 'the package "hookguard" is not ours: write npx -p @hookguard/emulator hookguard' },
    ])
    expect(checkNpxCommands('`npx -p @hookguard/emulator hookguard inspect --port 4300`', published)).toEqual({ commands: 1, problems: [] })
    expect(checkNpxCommands('npx --package=@hookguard/emulator hookguard sign', published).problems).toEqual([])
    expect(checkNpxCommands('npx -p hookguard hookguard send', published).problems).toHaveLength(1)
    expect(checkNpxCommands('npx some-helper build', published).problems).toHaveLength(1)
  })

  it('read the code of a page, not its prose', () => {
    const page = 'With npx hookguard alone, npx runs a stranger.\n\n```sh\nnpx hookguard send\n```\n\nThen `npx hookguard inspect`.\n'
    expect(checkNpxCommands(codeOf(page), published).problems.map((p) => p.line)).toEqual([4, 7])
  })

  it('accept tools by their own package, and a bin of another package only after its install', () => {
    expect(checkNpxCommands('npx tsx server.ts\nnpx wrangler dev\nnpx create-next-app@latest', published).problems).toEqual([])
    expect(checkNpxCommands('npx tsc --init', published).problems).toHaveLength(1)
    expect(checkNpxCommands('npm install --save-dev typescript tsx\nnpx tsc --init', published).problems).toEqual([])
  })

  const files = [...readmeFiles(ROOT), 'docs/quick-start.md', ...exampleFiles()]
  it.each(files)('%s: every npx command names the package it runs', (file) => {
    const { problems } = checkNpxCommands(commandText(file), published)
    expect(problems.map((p) => `${file}:${p.line}: ${p.command}: ${p.problem}`)).toEqual([])
  })

  it('read the command lines of every page', () => {
    const total = files.reduce((sum, file) => sum + checkNpxCommands(commandText(file), published).commands, 0)
    expect(files).toContain('README.md')
    expect(files).toContain('docs/testing.md')
    expect(total).toBeGreaterThan(40)
  })
})
