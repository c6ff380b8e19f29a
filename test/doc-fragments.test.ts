import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { CONTEXTS } from '../scripts/lib/snippet-contexts.ts'
import { extractAll } from '../scripts/lib/snippets.ts'

// A block that is not a whole file is pasted by a reader into a file of their own. So the text
// before it must say which file it joins, and every name it uses that the framework's quick start
// does not import: otherwise the pasted block does not compile (`Cannot find name 'tokenEndpoint'`).

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** The app contexts, with what their quick start's file imports from hookguard. */
const QUICK_STARTS: Record<string, { file: string; imports: readonly string[] }> = {
  'express-app': { file: 'server.ts', imports: ['webhook'] },
  'koa-router': { file: 'server.ts', imports: ['webhook'] },
  'hono-app': { file: 'server.ts', imports: ['webhook'] },
  'fastify-app': { file: 'server.ts', imports: ['frameworkErrors', 'logSerializers', 'notFoundHandler', 'requireWebhook', 'webhook'] },
}

/** The names a context's preamble imports from a hookguard package. */
function hookguardImports(preamble: string): string[] {
  const names: string[] = []
  for (const match of preamble.matchAll(/import \{([^}]*)\} from '@hookguard\/[a-z]+'/g)) {
    for (const name of (match[1] ?? '').split(',')) names.push(name.trim().replace(/^type /, ''))
  }
  return names.filter(Boolean)
}

/** The prose between the fragment and the block or heading before it. */
function leadOf(readme: string, line: number): string {
  const lines = readFileSync(join(ROOT, readme), 'utf8').split('\n')
  const lead: string[] = []
  // `line` is the fence's; the annotation is the line before it.
  for (let i = line - 3; i >= 0; i--) {
    const text = lines[i] ?? ''
    if (text.startsWith('```') || text.startsWith('#') || text.includes('snippet:')) break
    lead.unshift(text)
  }
  return lead.join(' ')
}

const fragments = extractAll(ROOT).snippets.filter(
  (snippet) => snippet.kind === 'fragment' && snippet.context !== undefined && snippet.context in QUICK_STARTS,
)

describe('a block that is not a whole file', () => {
  it('exists in the documentation (the check has something to check)', () => {
    expect(fragments.length).toBeGreaterThan(5)
  })

  it.each(fragments.map((snippet) => [`${snippet.readme}:${snippet.line}`, snippet] as const))(
    '%s says which file it joins, and what to import',
    (_, snippet) => {
      const context = snippet.context as string
      const quickStart = QUICK_STARTS[context] as { file: string; imports: readonly string[] }
      const lead = leadOf(snippet.readme, snippet.line)
      expect(lead, 'the text before the block names the file it joins').toContain(`\`${quickStart.file}\``)
      const missing = hookguardImports((CONTEXTS[context] as { preamble: string }).preamble).filter(
        (name) => !quickStart.imports.includes(name) && new RegExp(`\\b${name}\\b`).test(snippet.code),
      )
      for (const name of missing)
        expect(lead, `the text before the block says to import ${name}`).toMatch(
          new RegExp(`\`${name}\`[^.]*import|import[^.]*\`${name}\``),
        )
    },
  )
})
