import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DEFAULT_MAX_BODY_SIZE } from '@hookguard/core'
import { describe, expect, it } from 'vitest'

// What a newcomer had to look up outside the docs, now on the page where they looked: each check
// reads the page as a reader does. Links and #anchors are checked by `pnpm docs:build`, every
// code block by `pnpm test:snippets`.

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** A page's text; a missing page reads as empty, so that each check says what it lacks. */
const read = (file: string) => (existsSync(join(ROOT, file)) ? readFileSync(join(ROOT, file), 'utf8') : '')

/** The text of a page from the heading `heading` to the next heading of its level or above. */
function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n')
  const start = lines.indexOf(heading)
  if (start === -1) return ''
  const level = (heading.match(/^#+/)?.[0] ?? '').length
  const end = lines.findIndex((line, i) => i > start && /^#+ /.test(line) && (line.match(/^#+/)?.[0] ?? '').length <= level)
  return lines.slice(start, end === -1 ? undefined : end).join('\n')
}

describe('docs/errors.md', () => {
  it("413's row names the default limit and links the option", () => {
    const row = read('docs/errors.md')
      .split('\n')
      .find((line) => line.startsWith('| `payload_too_large`'))
    expect(DEFAULT_MAX_BODY_SIZE).toBe(1024 * 1024)
    expect(row).toContain('default 1 MiB')
    expect(row).toContain('[`maxBodySize`](configuration.md#maxbodysize)')
    const option = read('docs/configuration.md')
      .split('\n')
      .find((line) => line.includes('`maxBodySize`') && line.startsWith('|'))
    expect(option).toContain('id="maxbodysize"')
  })
})

describe('rotating the signing secret', () => {
  const steps = section(read('docs/modes.md'), '### Rotating the signing secret')

  it('has its own heading, linked from the security page', () => {
    expect(steps).not.toBe('')
    expect(read('docs/security.md')).toContain('(modes.md#rotating-the-signing-secret)')
  })

  it("goes step by step: the service's settings, both secrets at once, then the old one removed", () => {
    const numbered = steps.split('\n').filter((line) => /^\d+\. /.test(line))
    expect(numbered).toHaveLength(4)
    expect(steps).toContain('`auth.secret: [new, old]`')
    expect(steps).toContain("In the service's settings")
    expect(steps).toMatch(/new\s+secret alone/)
  })
})

describe('docs/cloudflare.md', () => {
  const page = read('docs/cloudflare.md')

  it('says how the secret reaches a local Worker, and that wrangler dev reads it when it starts', () => {
    const local = section(page, '## Running it locally')
    expect(local).toContain('`.dev.vars`')
    expect(local).toMatch(/reads `\.dev\.vars` once, when it starts/)
    expect(local).toContain('start it again')
  })

  it('explains the 500 page of wrangler dev with the error the terminal shows', () => {
    expect(section(page, '### A 500 with a page of HTML')).toContain('auth.secret must be a non-empty string')
  })

  it('has a tsconfig for the Worker, and links the Hono page, which links back', () => {
    expect(page).toMatch(/```json\n\{\n {2}"compilerOptions"/)
    expect(page).toContain('(frameworks/hono.md#cloudflare-workers)')
    expect(read('docs/frameworks/hono.md')).toContain('(../cloudflare.md#running-it-locally)')
  })
})

describe('docs/tunnel.md', () => {
  const page = read('docs/tunnel.md')

  it("puts the tunnel tools' own commands in front of the inspector, on the port given to it", () => {
    expect(page).toContain('hookguard inspect --mode secret --port 4300 --forward-to http://localhost:3000')
    expect(page).toContain('cloudflared tunnel --url http://localhost:4300')
    expect(page).toContain('ngrok http 4300')
    // The page depends on no default port of the inspector's, which may change.
    expect(page).not.toContain('8787')
  })

  it("says which address goes into the service's settings, and what the inspector shows", () => {
    expect(section(page, "## 4. The address in the service's settings")).toContain('trycloudflare.com/webhooks')
    expect(section(page, '## 5. What the inspector shows')).toContain('verdict')
  })
})

describe('the site', () => {
  const config = read('docs/.vitepress/config.ts')

  it("lists every page in the guide's sidebar", () => {
    const pages = (folder: string): string[] =>
      readdirSync(join(ROOT, folder), { withFileTypes: true })
        .filter((entry) => !entry.name.startsWith('.') && entry.name !== 'api' && entry.name !== 'public')
        .flatMap((entry) =>
          entry.isDirectory() ? pages(`${folder}/${entry.name}`) : entry.name.endsWith('.md') ? [`${folder}/${entry.name}`] : [],
        )
    const links = pages('docs')
      .filter((file) => file !== 'docs/index.md')
      .map((file) =>
        file
          .replace(/^docs/, '')
          .replace(/\/index\.md$/, '/')
          .replace(/\.md$/, ''),
      )
    expect(links).toContain('/tunnel')
    for (const link of links) expect(config, link).toContain(`link: '${link}'`)
  })

  it('CONTRIBUTING.md names every docs script, docs:preview too', () => {
    const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts)
    const docs = scripts.filter((name) => name.startsWith('docs'))
    expect(docs).toContain('docs:preview')
    const contributing = read('CONTRIBUTING.md')
    for (const name of docs) expect(contributing, name).toMatch(new RegExp(`pnpm (?:run )?${name}\\b`))
  })
})
