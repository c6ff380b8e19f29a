/**
 * `pnpm docs:build`'s last step: every internal link of the built site, `#fragment` included,
 * checked against the built HTML. VitePress fails the build on a link to a page that does not
 * exist, but not on one to a heading that does not: a renamed heading would leave every
 * `page.md#old-heading` link landing at the top of the page. Reads docs/.vitepress/dist.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, posix, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const DIST = fileURLToPath(new URL('../docs/.vitepress/dist/', import.meta.url))

/** Every .html file under `folder`, relative to DIST, with `/` separators. */
function htmlFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name)
    if (statSync(path).isDirectory()) return htmlFiles(path)
    return name.endsWith('.html') ? [relative(DIST, path).split('\\').join('/')] : []
  })
}

/** The ids an in-page link can land on: every `id="…"` and `name="…"` of the page. */
function idsOf(html: string): Set<string> {
  return new Set([...html.matchAll(/\s(?:id|name)="([^"]*)"/g)].map((match) => decodeEntities(match[1] as string)))
}

function decodeEntities(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&#x([\da-f]+);/gi, (_, code: string) => String.fromCodePoint(Number.parseInt(code, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
}

/** The built file a site path names: `/x.html`, `/dir/` (its index.html) or `/x` (x.html). */
function fileFor(path: string): string | undefined {
  const clean = decodeURIComponent(path).replace(/^\//, '')
  for (const candidate of [clean, `${clean}index.html`, `${clean}.html`, `${clean}/index.html`]) {
    if (candidate !== '' && existsSync(join(DIST, candidate)) && statSync(join(DIST, candidate)).isFile()) return candidate
  }
  return undefined
}

if (!existsSync(DIST)) {
  console.error(`✗ ${DIST} does not exist: run vitepress build docs first`)
  process.exit(1)
}

const pages = htmlFiles(DIST)
const ids = new Map<string, Set<string>>()
const idsFor = (file: string): Set<string> => {
  let found = ids.get(file)
  if (found === undefined) {
    found = idsOf(readFileSync(join(DIST, file), 'utf8'))
    ids.set(file, found)
  }
  return found
}

const problems: string[] = []
let checked = 0
for (const page of pages) {
  if (page === '404.html') continue
  const html = readFileSync(join(DIST, page), 'utf8')
  for (const [, raw] of html.matchAll(/<a\s[^>]*?href="([^"]*)"/g)) {
    const href = decodeEntities(raw as string)
    if (/^[a-z][a-z\d+.-]*:/i.test(href) || href.startsWith('//')) continue // another site, mailto:
    const hash = href.indexOf('#')
    const path = hash === -1 ? href : href.slice(0, hash)
    const fragment = hash === -1 ? '' : decodeURIComponent(href.slice(hash + 1))
    const from = `/${page}`
    const target = path === '' ? page : fileFor(posix.resolve(posix.dirname(from), path))
    checked++
    if (target === undefined) {
      // Assets (the chart, fonts) are files too; anything else is a page that was never built.
      if (!existsSync(join(DIST, decodeURIComponent(posix.resolve(posix.dirname(from), path)).slice(1)))) {
        problems.push(`${page}: ${href}: no such page`)
      }
      continue
    }
    if (fragment !== '' && !idsFor(target).has(fragment)) problems.push(`${page}: ${href}: ${target} has no id "${fragment}"`)
  }
}

if (problems.length > 0) {
  console.error(`✗ ${problems.length} internal links lead nowhere:\n  ${problems.join('\n  ')}`)
  process.exit(1)
}
console.log(`✓ ${checked} internal links of ${pages.length} pages, every #anchor found`)
