/**
 * The site's local search (VitePress's MiniSearch index): what each page gives the index, and how
 * what a user types is ranked. The aim is that a question ("what does 413 mean", "payload too
 * large", "rotate a secret") has the page that answers it among the first results, rather than the
 * benchmark notes, which quote every code and status, or six identical rows of the API reference.
 * `pnpm docs:test` asks the built site such questions in Chromium (scripts/docs-browser-test.ts).
 */
import { existsSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { DefaultTheme } from 'vitepress'

type Markdown = Parameters<NonNullable<DefaultTheme.LocalSearchOptions['_render']>>[2]
type Token = ReturnType<Markdown['parse']>[number]

/** Pages that log measurements: indexed by their headings and each section's first paragraph. */
const MEASUREMENT_LOGS = new Set(['benchmarks.md'])
/** Where TypeDoc writes each package's reference: `api/@hookguard/<package>/…` (a relative or an absolute path). */
const API_PAGE = /(?:^|\/)api\/(@hookguard\/[^/]+)\/(.+)$/
const CORE = '@hookguard/core'
const SRC_DIR = fileURLToPath(new URL('..', import.meta.url))

/**
 * Whether an API reference page is left out of the index: an adapter re-exports the core's types,
 * and TypeDoc writes each again under the adapter, identical but for the breadcrumb. Only the
 * core's is indexed.
 */
function reExported(src: string, pkg: string, rest: string, srcDir: string): boolean {
  if (pkg === CORE) return false
  const core = join(srcDir, 'api', CORE, rest)
  return existsSync(core) && withoutBreadcrumb(readFileSync(core, 'utf8')) === withoutBreadcrumb(src)
}

/** TypeDoc's first line is the page's breadcrumb (`[hookguard](…) / [@hookguard/core](…) / Name`). */
function withoutBreadcrumb(src: string): string {
  return src.replace(/^\[hookguard\]\(.*\n/, '')
}

/** Each heading and the first paragraph under it; tables, lists, code and later paragraphs left out. */
function headingsAndLeads(tokens: Token[]): Token[] {
  const kept: Token[] = []
  let lead = false
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token
    if (token.type === 'heading_open' || (lead && token.type === 'paragraph_open' && token.level === 0)) {
      const close = token.type === 'heading_open' ? 'heading_close' : 'paragraph_close'
      let end = i
      while ((tokens[end] as Token).type !== close) end++
      kept.push(...tokens.slice(i, end + 1))
      lead = token.type === 'heading_open'
      i = end
    }
  }
  return kept
}

/**
 * The page's sections as VitePress splits them (one per heading, titled by the headings above it;
 * an API reference page's title names its package), each with the terms it defines ahead of its
 * text. They are indexed as a field of their own, `terms`, so that "413" or "maxBodySize" finds
 * the table that explains it rather than every page that mentions it. A page's first section also
 * defines the name the sidebar gives the page: "The inspector" is inspect.md, whose own heading
 * says "Inspecting deliveries".
 */
function* sections(file: string, html: string, names: Map<string, string>): Generator<{ anchor: string; titles: string[]; text: string }> {
  const api = API_PAGE.exec(file)
  const name = names.get(relative(SRC_DIR, file).split('\\').join('/'))
  const parts = html.split(HEADING)
  parts.shift()
  let parents: string[] = []
  for (let i = 0; i < parts.length; i += 3) {
    const level = Number(parts[i]) - 1
    const heading = HEADING_CONTENT.exec(parts[i + 1] as string)
    let title = text(heading?.[1] ?? '').trim()
    const content = parts[i + 2] as string
    if (level === 0 && api !== null) title = `${api[1]} › ${title}`
    const titles = [...parents.slice(0, level), title].filter(Boolean)
    if (level === 0) parents = [title]
    else parents[level] = title
    if (title === '' || content === '') continue
    // Each word once: a section that defines eight `invalid_…` codes is not eight times about "invalid".
    const defined = level === 0 && name !== undefined ? [name, ...definedTerms(content)] : definedTerms(content)
    const terms = new Set(defined.flatMap((term) => term.toLowerCase().split(/[\n\r\p{Z}\p{P}]+/u)))
    yield { anchor: heading?.[2] ?? '', titles, text: `${[...terms].join(' ')}${TERMS_END}${text(content)}` }
  }
}

/** A heading with its anchor link, as markdown-it renders it (VitePress's own pattern). */
const HEADING = /<h(\d*).*?>(.*?<a.*? href="#.*?".*?>.*?<\/a>)<\/h\1>/gi
const HEADING_CONTENT = /(.*?)<a.*? href="#(.*?)".*?>.*?<\/a>/i
/** Ends a section's defined terms in the text VitePress hands the index (see `extractField`). */
const TERMS_END = '\u001f'

/**
 * What a section defines: the names in code in a table's first column (an error code, an option),
 * the cells that are a bare number (a status), and the names in code in a list item's bold lead-in
 * (`**413 `payload_too_large`**: …`).
 */
function definedTerms(html: string): string[] {
  const named: string[] = []
  for (const [, row] of html.matchAll(/<tr>([\s\S]*?)<\/tr>/g)) {
    const cells = [...(row as string).matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map(([, cell]) => cell as string)
    // `username`, `password` (mode `basic`): the names, not the mode they belong to.
    named.push((cells[0] ?? '').replace(/\([\s\S]*?\)/g, ''))
    for (const cell of cells) if (/^\s*\d+\s*$/.test(cell)) named.push(`<code>${cell.trim()}</code>`)
  }
  for (const [, lead] of html.matchAll(/<li>\s*(?:<p>\s*)?<strong>([\s\S]*?)<\/strong>/g)) named.push(lead as string)
  // A name, not its parameters: `verifySignature(body, header, …)` defines verifySignature.
  return named.flatMap((cell) =>
    [...cell.matchAll(/<code>([\s\S]*?)<\/code>/g)].map(([, code]) => text(code as string).split(/[(<&]/)[0] as string),
  )
}

function text(html: string): string {
  return html.replace(/<[^>]*>/g, '')
}

/** The name each page of the sidebar has there, by its file: `/inspect` → `inspect.md`, `/frameworks/` → `frameworks/index.md`. */
function sidebarNames(items: DefaultTheme.SidebarItem[], names = new Map<string, string>()): Map<string, string> {
  for (const item of items) {
    if (item.link !== undefined && item.text !== undefined)
      names.set(`${item.link.replace(/^\//, '').replace(/\/$/, '/index')}.md`, item.text)
    sidebarNames(item.items ?? [], names)
  }
  return names
}

/** The local search of a site whose guide has this sidebar. */
export function localSearch(sidebar: DefaultTheme.SidebarItem[]): DefaultTheme.Config['search'] {
  const names = sidebarNames(sidebar)
  return {
    provider: 'local',
    options: {
      _render(src, env, md) {
        const api = API_PAGE.exec(env.relativePath)
        if (api !== null && reExported(src, api[1] as string, api[2] as string, env.path.slice(0, -env.relativePath.length))) return ''
        const html = MEASUREMENT_LOGS.has(env.relativePath)
          ? md.renderer.render(headingsAndLeads(md.parse(src, env)), md.options, env)
          : md.render(src, env)
        return env.frontmatter?.search === false ? '' : html
      },
      miniSearch: {
        _splitIntoSections: (file, html) => sections(file, html, names),
        options: {
          // VitePress's three fields, and the terms a section defines (see `sections`). The functions
          // below are sent to the browser as their source text, so they name nothing outside themselves.
          ...({ fields: ['title', 'titles', 'text', 'terms'] } as object),
          extractField: (document, field) => {
            const record = document as Record<string, string | string[]>
            if (field !== 'text' && field !== 'terms') return record[field]
            const text = String(record.text ?? '')
            const end = text.indexOf('\u001f')
            if (field === 'terms') return end === -1 ? '' : text.slice(0, end)
            return text.slice(end + 1)
          },
          // The words of a question, not of its subject: "what does 413 mean" is a search for 413.
          processTerm: (term) => {
            const word = term.toLowerCase()
            return /^(a|an|and|are|as|at|be|by|can|do|does|for|from|how|i|if|in|is|it|me|mean|means|my|of|on|or|the|to|what|when|where|which|why|with)$/.test(
              word,
            )
              ? null
              : word
          },
        },
        searchOptions: {
          // A status or a number is meant exactly: fuzzy "413" also finds 403, 412, 415 and 4130.
          fuzzy: (term) => (term.length > 4 && !/\d/.test(term) ? 0.2 : false),
          prefix: (term) => term.length > 2 && !/\d/.test(term),
          boost: { terms: 5, title: 4, text: 2, titles: 1 },
          // The guide explains; the API reference lists, and the benchmark and reliability pages report
          // how the project measures itself: a guide page first where both match.
          boostDocument: (id) => (/^\/(api\/|benchmarks\.html|reliability\.html)/.test(String(id)) ? 0.5 : 1),
        },
      },
    },
  }
}
