import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { slugify } from '../docs/.vitepress/links.ts'
import { quickStartPage } from '../scripts/lib/quick-start.ts'

// docs/quick-start.md is what GitHub and npm show of the docs' Quick start, and a dozen pages link
// into its sections: it must hold the README's Quick start itself, not an include that only the
// site expands, with every link working from docs/.

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
const page = readFileSync(join(ROOT, 'docs', 'quick-start.md'), 'utf8')

describe('docs/quick-start.md', () => {
  it('is what README.md makes (pnpm docs:quick-start)', () => {
    expect(page).toBe(quickStartPage(readme))
  })

  it('holds the Quick start as text, with no include', () => {
    expect(page).not.toContain('@include')
    expect(page).toContain('## Send a first delivery')
    expect(page.split('\n').length).toBeGreaterThan(100)
  })

  it('has every section the other pages link to', () => {
    const anchors = new Set([...page.matchAll(/^#+ (.+)$/gm)].map((match) => slugify(match[1] as string)))
    const pages = [join(ROOT, 'README.md'), ...markdownUnder(join(ROOT, 'docs'))]
    const wanted = pages.flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/quick-start\.md#([\w-]+)/g)].map((m) => m[1] as string))
    expect(wanted.length).toBeGreaterThan(5)
    for (const anchor of wanted) expect(anchors, `#${anchor}`).toContain(anchor)
  })

  it('links only to files that exist from docs/, or to addresses', () => {
    for (const [, href] of page.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:|^#/.test(href as string)) continue
      const target = (href as string).split('#')[0] as string
      expect(existsSync(join(ROOT, 'docs', target)), href).toBe(true)
    }
  })

  it('turns the region’s repository links into links from docs/, and its h3s into h2s', () => {
    const made = quickStartPage(
      'x\n<!-- #region quick-start -->\n### Koa\nSee [Koa](docs/frameworks/koa.md#types) and [here](#koa).\n<!-- #endregion quick-start -->\n',
    )
    expect(made).toContain('## Koa\nSee [Koa](frameworks/koa.md#types) and [here](#koa).')
    expect(() => quickStartPage('no region')).toThrow(/no <!-- #region quick-start -->/)
  })
})

function markdownUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name)
    if (entry.name.startsWith('.') || entry.name === 'api') return []
    if (entry.isDirectory()) return markdownUnder(path)
    return entry.name.endsWith('.md') ? [path] : []
  })
}
