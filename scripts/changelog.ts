/**
 * Renders CHANGELOG.md from the changesets: the pending ones (.changeset/*.md) as the next
 * version, "unreleased", and below them every released version, as `changeset version` wrote it
 * into packages/core/CHANGELOG.md (the six packages are one `fixed` group, so one package's
 * changelog is every package's). Nothing is bumped and no changeset is consumed: that stays
 * `pnpm changeset version`'s job, at release time.
 *
 * `pnpm changelog` writes the file; `pnpm changelog --check` exits 1 if it is not up to date.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, rootBin } from './lib/packages.ts'

type Bump = 'major' | 'minor' | 'patch' | 'none'

interface Changeset {
  file: string
  bumps: Map<string, Bump>
  summary: string
}

const BUMPS: readonly Bump[] = ['major', 'minor', 'patch', 'none']
const HEADINGS: Record<Bump, string> = {
  major: 'Breaking changes',
  minor: 'Features',
  patch: 'Fixes',
  none: 'Changes',
}
const CHANGESETS = join(ROOT, '.changeset')
const TARGET = join(ROOT, 'CHANGELOG.md')

const config = JSON.parse(readFileSync(join(CHANGESETS, 'config.json'), 'utf8')) as { fixed: string[][] }
const group = config.fixed[0] ?? []
const current = (JSON.parse(readFileSync(join(ROOT, 'packages/core/package.json'), 'utf8')) as { version: string }).version

const pending = readdirSync(CHANGESETS)
  .filter((file) => file.endsWith('.md') && file !== 'README.md')
  .sort()
  .map((file) => parse(file, readFileSync(join(CHANGESETS, file), 'utf8')))

const text = formatted(render())
if (process.argv.includes('--check')) {
  const now = existsSync(TARGET) ? readFileSync(TARGET, 'utf8') : ''
  if (now !== text) {
    console.error('CHANGELOG.md is not what the changesets say: run `pnpm changelog`')
    process.exitCode = 1
  } else console.log(`CHANGELOG.md is up to date (${pending.length} pending changesets)`)
} else {
  writeFileSync(TARGET, text)
  console.log(`CHANGELOG.md: ${pending.length} pending changesets as ${nextVersion()}`)
}

/** The text as `pnpm format` would leave it, so that the file and the check agree with the linter. */
function formatted(markdown: string): string {
  const result = spawnSync(rootBin('biome'), ['format', '--stdin-file-path=CHANGELOG.md'], { cwd: ROOT, input: markdown, encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`biome format failed: ${result.stderr}`)
  return result.stdout
}

function parse(file: string, source: string): Changeset {
  const match = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(source.replace(/\r\n/g, '\n'))
  if (match === null) throw new Error(`.changeset/${file}: no front matter`)
  const bumps = new Map<string, Bump>()
  for (const line of (match[1] as string).split('\n')) {
    const entry = /^\s*"?([^":]+)"?\s*:\s*(\w+)\s*$/.exec(line)
    if (entry === null) continue
    const bump = entry[2] as Bump
    if (!BUMPS.includes(bump)) throw new Error(`.changeset/${file}: "${entry[2]}" is not a bump type`)
    bumps.set(entry[1] as string, bump)
  }
  return { file, bumps, summary: (match[2] as string).trim() }
}

/** The highest bump of a changeset. */
function bumpOf(changeset: Changeset): Bump {
  return BUMPS.find((bump) => [...changeset.bumps.values()].includes(bump)) ?? 'none'
}

/** The version `changeset version` would give the group: the current one, bumped by the highest pending bump. */
function nextVersion(): string {
  const [major = 0, minor = 0, patch = 0] = current.split('.').map(Number)
  const highest = BUMPS.find((bump) => pending.some((c) => bumpOf(c) === bump)) ?? 'none'
  if (highest === 'major') return `${major + 1}.0.0`
  if (highest === 'minor') return `${major}.${minor + 1}.0`
  if (highest === 'patch') return `${major}.${minor}.${patch + 1}`
  return current
}

function render(): string {
  const lines = [
    '# Changelog',
    '',
    `Every package of hookguard (${group.map((name) => `\`${name}\``).join(', ')}) is released together, with one version.`,
    'This file is written by `pnpm changelog` from the [changesets](.changeset): the pending ones first, then every release.',
    '',
  ]
  if (pending.length === 0) lines.push('## Unreleased', '', 'Nothing yet.', '')
  else {
    lines.push(`## ${nextVersion()} (unreleased)`, '')
    for (const bump of BUMPS) {
      const entries = pending.filter((c) => bumpOf(c) === bump)
      if (entries.length === 0) continue
      lines.push(`### ${HEADINGS[bump]}`, '')
      for (const entry of entries) {
        const only = group.every((name) => entry.bumps.has(name)) ? '' : ` (${[...entry.bumps.keys()].join(', ')})`
        const [first = '', ...rest] = entry.summary.split('\n')
        lines.push(`- ${first}${only}`, ...rest.map((line) => (line === '' ? '' : `  ${line}`)))
      }
      lines.push('')
    }
  }
  const released = join(ROOT, 'packages/core/CHANGELOG.md')
  if (existsSync(released)) {
    // changeset version's file: "# @hookguard/core", then "## <version>" sections.
    const body = readFileSync(released, 'utf8').replace(/^# .*\n+/, '')
    lines.push(body.trim(), '')
  }
  return `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`
}
