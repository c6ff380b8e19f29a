/**
 * `pnpm docs:test`, after `pnpm docs:build`: the built site in a real browser. Debian's Chromium
 * (the browser tests' own: its headless shell, or the whole browser; CHROMIUM_PATH for another
 * one), driven by playwright-core, against
 * docs/.vitepress/dist served on 127.0.0.1 on a free port:
 *
 * 1. every page of the build loads, and hydrates, without an error in the console or the page;
 * 2. the local search finds `invalid_signature` and `dedupe`, and answers the questions a user asks:
 *    typed into the search box, each question has the page that answers it among its first three
 *    results, and no two pages' rows read the same (an API reference row names its package);
 * 3. every code block of the Quick start page has a copy button, and clicking it copies exactly
 *    the block of README.md's quick-start region (the TypeScript ones as the snippet test reads them).
 *
 * Bounded by one deadline (HOOKGUARD_DOCS_TEST_TIMEOUT seconds, default 600).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, normalize, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromiumMissing, chromiumPath } from '@hookguard/testkit/chromium'
import { type Browser, chromium, type Page } from 'playwright-core'
import { extractSnippets } from './lib/snippets.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const DIST = join(ROOT, 'docs/.vitepress/dist')
const CHROMIUM = chromiumPath()
const TIMEOUT_S = Number(process.env.HOOKGUARD_DOCS_TEST_TIMEOUT ?? 600)
const SEARCHES = ['invalid_signature', 'dedupe']
/** What a user types into the search box, and the page that answers it. */
const QUESTIONS: { question: string; page: string }[] = [
  { question: 'rotate a secret', page: '/modes.html' },
  { question: 'what does 413 mean', page: '/errors.html' },
  { question: 'payload too large', page: '/errors.html' },
  { question: 'payload_too_large', page: '/errors.html' },
  { question: 'maxBodySize', page: '/configuration.html' },
  { question: 'raw body unavailable', page: '/troubleshooting.html' },
  { question: 'invalid signature whitespace', page: '/inspect.html' },
  { question: 'Redis Cluster', page: '/scaling.html' },
  { question: 'Workers dedupe', page: '/cloudflare.html' },
  { question: 'Durable Object', page: '/cloudflare.html' },
  { question: 'oauth2 token address', page: '/modes.html' },
  { question: 'basic auth password', page: '/modes.html' },
  { question: 'Koa setup', page: '/frameworks/koa.html' },
  { question: 'next.js route handler', page: '/frameworks/fetch.html' },
  { question: 'test my receiver locally', page: '/testing.html' },
  { question: 'emulator', page: '/testing.html' },
  { question: 'inspector', page: '/inspect.html' },
]
/** How many of the first results a question's page must be among. */
const TOP = 3
/** Pages loaded at once. */
const TABS = 2
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
}

let passed = 0
let failed = 0
async function check(name: string, body: () => Promise<string | undefined>): Promise<void> {
  const started = Date.now()
  try {
    const detail = await body()
    passed++
    console.log(`✓ ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)${detail ? `: ${detail}` : ''}`)
  } catch (error) {
    failed++
    console.log(`✗ ${name}\n    ${(error instanceof Error ? error.message : String(error)).replaceAll('\n', '\n    ')}`)
  }
}

function htmlFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name)
    if (statSync(path).isDirectory()) return htmlFiles(path)
    return name.endsWith('.html') ? [relative(DIST, path).split('\\').join('/')] : []
  })
}

/** The site's URL path of a built page: `index.html` → `/`, `frameworks/koa.html` → `/frameworks/koa.html`. */
function urlPath(file: string): string {
  return `/${file.replace(/(^|\/)index\.html$/, '$1')}`
}

/** A static server for the build, as a host serves it: `/dir/` is its index.html, a miss is 404.html with 404. */
function serve(): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname)
    let file = normalize(join(DIST, path))
    if (!file.startsWith(DIST)) file = join(DIST, '404.html')
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html')
    const found = existsSync(file)
    const body = readFileSync(found ? file : join(DIST, '404.html'))
    res.writeHead(found ? 200 : 404, { 'content-type': TYPES[extname(found ? file : '.html')] ?? 'application/octet-stream' })
    res.end(body)
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo
      resolve({ origin: `http://127.0.0.1:${port}`, close: () => new Promise((done) => server.close(() => done())) })
    }),
  )
}

/** Opens `path` and waits until Vue has taken the page over; resolves the errors it reported. */
async function visit(page: Page, url: string): Promise<string[]> {
  const errors: string[] = []
  const onConsole = (message: { type(): string; text(): string }) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`)
  }
  const onPageError = (error: Error) => errors.push(`page: ${error.message}`)
  const onResponse = (response: { status(): number; url(): string }) => {
    if (response.status() >= 400) errors.push(`HTTP ${response.status()} for ${response.url()}`)
  }
  page.on('console', onConsole)
  page.on('pageerror', onPageError)
  page.on('response', onResponse)
  try {
    const response = await page.goto(url, { waitUntil: 'domcontentloaded' })
    if (response === null || response.status() !== 200) errors.push(`HTTP ${response?.status()}`)
    // Vue marks the container once hydration is over, after it has reported any mismatch.
    await page.waitForFunction(
      () => (document.querySelector('#app') as { __vue_app__?: unknown } | null)?.__vue_app__ !== undefined,
      undefined,
      {
        polling: 25,
      },
    )
    // A round trip, so that the console messages sent before it have arrived.
    await page.evaluate(() => document.readyState)
  } finally {
    page.off('console', onConsole)
    page.off('pageerror', onPageError)
    page.off('response', onResponse)
  }
  return errors
}

/** The fenced blocks of README.md's quick-start region, with what the copy button should copy. */
function quickStartBlocks(): { line: number; lang: string; text: string }[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const lines = readme.split('\n')
  const start = lines.indexOf('<!-- #region quick-start -->')
  const end = lines.indexOf('<!-- #endregion quick-start -->')
  if (start === -1 || end === -1) throw new Error('README.md has no <!-- #region quick-start --> … <!-- #endregion quick-start -->')
  const snippets = new Map(extractSnippets(readme, 'README.md').snippets.map((s) => [s.line, s.code]))
  const blocks: { line: number; lang: string; text: string }[] = []
  for (let i = start; i < end; i++) {
    const open = /^```(\w*)$/.exec(lines[i] as string)
    if (open === null) continue
    let close = i + 1
    while (lines[close] !== '```') close++
    const lang = open[1] as string
    const text = lines.slice(i + 1, close).join('\n')
    // The TypeScript blocks as the snippet test compiles them; the shell ones as VitePress copies them (trimmed).
    blocks.push({ line: i + 1, lang, text: snippets.get(i + 1)?.replace(/\n$/, '') ?? text })
    i = close
  }
  return blocks
}

const deadline = setTimeout(() => {
  console.log(`✗ timed out after ${TIMEOUT_S} s (HOOKGUARD_DOCS_TEST_TIMEOUT)`)
  process.exit(1)
}, TIMEOUT_S * 1000)
deadline.unref()

if (!existsSync(join(DIST, 'index.html'))) {
  console.log(`✗ no build in ${relative(ROOT, DIST)}: run pnpm docs:build first`)
  process.exit(1)
}
if (CHROMIUM === undefined) {
  console.log(`✗ ${chromiumMissing()}`)
  process.exit(1)
}

const site = await serve()
let browser: Browser | undefined
try {
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] })
  const context = await browser.newContext()
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: site.origin })
  const page = await context.newPage()
  page.setDefaultTimeout(15_000)

  const pages = htmlFiles(DIST)
    .filter((file) => file !== '404.html')
    .sort()
  await check(`${pages.length} pages load without an error`, async () => {
    // A few tabs at once: each page is one navigation, most of the time spent waiting.
    const queue = [...pages]
    const problems: string[] = []
    const tabs = await Promise.all(Array.from({ length: TABS }, () => context.newPage()))
    await Promise.all(
      tabs.map(async (tab) => {
        tab.setDefaultTimeout(15_000)
        for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
          const errors = await visit(tab, `${site.origin}${urlPath(file)}`).catch((error: Error) => [error.message])
          if (errors.length > 0) problems.push(`${urlPath(file)}: ${errors.join('; ')}`)
        }
        await tab.close()
      }),
    )
    if (problems.length > 0) throw new Error(problems.sort().join('\n'))
    return undefined
  })

  for (const term of SEARCHES) {
    await check(`the local search finds "${term}"`, async () => {
      await visit(page, `${site.origin}/`)
      await page.locator('.VPNavBarSearch button').first().click()
      const input = page.locator('#localsearch-input')
      await input.fill(term)
      const results = page.locator('.VPLocalSearchBox .results .result')
      await results.first().waitFor()
      const titles = (await results.allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim())
      const found = titles.filter((title) => title.toLowerCase().includes(term.toLowerCase()))
      if (titles.length === 0) throw new Error('no results')
      await page.keyboard.press('Escape')
      return `${titles.length} results, ${found.length} naming it (first: ${titles[0]?.slice(0, 60)})`
    })
  }

  await check(`the local search answers ${QUESTIONS.length} questions with their page in the first ${TOP} results`, async () => {
    await visit(page, `${site.origin}/`)
    await page.locator('.VPNavBarSearch button').first().click()
    const input = page.locator('#localsearch-input')
    const results = page.locator('.VPLocalSearchBox .results a.result')
    const answered = page.locator('.VPLocalSearchBox .results a.result, .VPLocalSearchBox .results .no-results')
    const misses: string[] = []
    const ranks: number[] = []
    for (const { question, page: expected } of QUESTIONS) {
      // Emptied first, so that the results read next are the question's, not the previous one's;
      // then the whole question at once, as the box searches it once typing pauses.
      await input.fill('')
      await answered.first().waitFor({ state: 'detached' })
      await input.fill(question)
      await answered.first().waitFor()
      const shown = await results.evaluateAll((links) =>
        links.map((link) => ({
          page: (link.getAttribute('href') ?? '').split('#')[0] as string,
          label: link.getAttribute('aria-label') ?? '',
        })),
      )
      // An API reference row names its package, and a type the adapters re-export is listed once:
      // rows of two pages never read the same.
      const unnamed = shown.filter((result) => result.page.startsWith('/api/@hookguard/') && !result.label.startsWith('@hookguard/'))
      if (unnamed.length > 0)
        misses.push(`"${question}": API reference rows without their package: ${unnamed.map((result) => result.label).join(', ')}`)
      const alike = shown.filter((result, i) =>
        shown.some((other, j) => j < i && other.label === result.label && other.page !== result.page),
      )
      if (alike.length > 0)
        misses.push(`"${question}": rows of two pages that read the same: ${[...new Set(alike.map((result) => result.label))].join(', ')}`)
      const rank = shown.findIndex((result) => result.page === expected) + 1
      ranks.push(rank)
      if (rank === 0 || rank > TOP) {
        const first = shown.slice(0, TOP).map((result) => `${result.page} (${result.label})`)
        misses.push(
          `"${question}": ${expected} ${rank === 0 ? `not among the ${shown.length} results` : `is result ${rank}`}; first: ${first.join(', ') || 'none'}`,
        )
      }
    }
    await page.keyboard.press('Escape')
    if (misses.length > 0) throw new Error(`${misses.length} problems in ${QUESTIONS.length} questions:\n${misses.join('\n')}`)
    return `the expected page was result ${ranks.join(', ')}`
  })

  await check('the Quick start page: every code block has a copy button that copies the block as written', async () => {
    const blocks = quickStartBlocks()
    await visit(page, `${site.origin}/quick-start.html`)
    const rendered = page.locator('.vp-doc div[class*="language-"]')
    const count = await rendered.count()
    if (count !== blocks.length) throw new Error(`${count} code blocks on the page, ${blocks.length} in README.md's quick-start region`)
    for (let i = 0; i < count; i++) {
      const block = blocks[i] as (typeof blocks)[number]
      const button = rendered.nth(i).locator('> button.copy')
      if ((await button.count()) !== 1) throw new Error(`README.md:${block.line}: no copy button`)
      await page.evaluate(() => navigator.clipboard.writeText(''))
      await button.click()
      await page.waitForFunction(async () => (await navigator.clipboard.readText()) !== '')
      const copied = await page.evaluate(() => navigator.clipboard.readText())
      const expected = /^(sh|bash|shell)$/.test(block.lang) ? block.text.trim() : block.text
      if (copied.replace(/\n$/, '') !== expected) {
        throw new Error(`README.md:${block.line}: the copy button copied\n${copied}\n--- instead of ---\n${expected}`)
      }
    }
    return `${count} blocks (${blocks.filter((b) => b.lang === 'ts').length} TypeScript)`
  })
} catch (error) {
  failed++
  console.log(`✗ ${error instanceof Error ? error.message : String(error)}`)
} finally {
  await browser?.close()
  await site.close()
}
console.log(`docs: ${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)
