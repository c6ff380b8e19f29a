/**
 * The code blocks of the READMEs, read from the Markdown as a user would copy them, with what
 * each one claims to be. `scripts/snippet-test.ts` compiles and runs them; the workerd job of the
 * runtime matrix (`runtimes/readme-worker.ts`) runs the Worker ones.
 *
 * Every ```ts, ```typescript and ```js block of README.md, packages/*\/README.md, CONTRIBUTING.md
 * and docs/**\/*.md (see `readmeFiles`) is one of:
 *
 * - a complete file: compiled as it is. A block with no annotation is one when it has an `import`
 *   or an `export`; every other unannotated block is an error, so nothing goes unchecked by
 *   accident. Annotated, it may say more:
 *
 *       <!-- snippet: file env=workers -->                 compiled with the Workers types
 *       <!-- snippet: file run -->                         also run (with tsx); must exit 0
 *       <!-- snippet: file deliver=secret,oauth2:/webhooks expect=204 -->
 *           a server: started on an ephemeral port (PORT), then the emulator delivers to it in
 *           each mode listed (`mode` or `mode:/path`, default path /webhooks; in mode oauth2 the
 *           token address is `token=`, default /webhooks/token), genuine and tampered, and the
 *           answers must be `expect` (default 204) and a refusal
 *       <!-- snippet: file env=workers deliver=secret -->  a Worker, run in workerd
 *
 * - a fragment: `<!-- snippet: context=NAME -->` compiles it after the preamble NAME (see
 *   `snippet-contexts.ts`), which declares what the surrounding text assumes (`app`, `handler`…).
 *   With `deliver=`, a context that has a postamble (it listens on PORT) makes it a server too:
 *   `<!-- snippet: context=express-app deliver=oauth2 -->`;
 * - not compiled: `<!-- snippet: nocompile reason="…" -->`, with the reason. Kept for types
 *   shown for reading, whose declarations the package checks elsewhere.
 *
 * The annotation is an HTML comment (invisible on GitHub and npm) on the last non-blank line
 * before the fence. JSDoc `@example` blocks in the sources are not read here.
 *
 * Plain TypeScript (types erasable by Node's type stripping): the workerd driver imports it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export type SnippetEnv = 'node' | 'workers'
export type DeliveryMode = 'secret' | 'basic' | 'oauth2' | 'none'

export interface Delivery {
  mode: DeliveryMode
  /** The webhook address's path, e.g. `/webhooks`. */
  path: string
}

export interface Snippet {
  /** The README, relative to the repository root (`packages/hono/README.md`). */
  readme: string
  /** 1-based line of the opening fence. */
  line: number
  /** A name for files and messages: `hono-readme-41`. */
  id: string
  lang: 'ts' | 'js'
  code: string
  kind: 'file' | 'fragment' | 'nocompile'
  env: SnippetEnv
  /** Fragments: the preamble they are compiled after. */
  context?: string
  /** nocompile: why. */
  reason?: string
  /** Run with node and expect exit code 0 (a test file, a script). */
  run: boolean
  /** A server: the deliveries to make to it. */
  deliveries: Delivery[]
  /** oauth2: the token address's path. */
  tokenPath: string
  /** The status a genuine delivery is answered with. */
  expect: number
}

export interface Extracted {
  snippets: Snippet[]
  /** Blocks that could not be classified or whose annotation is wrong: `file:line: message`. */
  problems: string[]
}

const COMPILED_LANGS = new Map<string, 'ts' | 'js'>([
  ['ts', 'ts'],
  ['typescript', 'ts'],
  ['js', 'js'],
  ['javascript', 'js'],
])
const MODES: readonly string[] = ['secret', 'basic', 'oauth2', 'none']
const ANNOTATION = /^<!--\s*snippet:\s*(.*?)\s*-->$/
const KNOWN_KEYS = new Set(['file', 'nocompile', 'context', 'env', 'run', 'deliver', 'token', 'expect', 'reason'])

/**
 * README.md, every packages/*\/README.md, CONTRIBUTING.md and every page of docs/ (its generated
 * API reference, docs/api, and docs/quick-start.md, a copy of README.md's Quick start, aside),
 * relative to `root`.
 */
export function readmeFiles(root: string): string[] {
  const packages = join(root, 'packages')
  return [
    'README.md',
    ...readdirSync(packages)
      .sort()
      .map((folder) => `packages/${folder}/README.md`)
      .filter((file) => existsSync(join(root, file))),
    ...['CONTRIBUTING.md'].filter((file) => existsSync(join(root, file))),
    ...markdownUnder(root, 'docs').filter((file) => file !== 'docs/quick-start.md'),
  ]
}

/** The .md files under `folder` (relative to `root`), sorted; docs/api (TypeDoc's output) and dot-folders left out. */
function markdownUnder(root: string, folder: string): string[] {
  if (!existsSync(join(root, folder))) return []
  return readdirSync(join(root, folder), { withFileTypes: true })
    .filter((entry) => !entry.name.startsWith('.') && `${folder}/${entry.name}` !== 'docs/api')
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const path = `${folder}/${entry.name}`
      if (entry.isDirectory()) return markdownUnder(root, path)
      return entry.name.endsWith('.md') ? [path] : []
    })
}

/** Every snippet of every README under `root`. */
export function extractAll(root: string): Extracted {
  const all: Extracted = { snippets: [], problems: [] }
  for (const readme of readmeFiles(root)) {
    const { snippets, problems } = extractSnippets(readFileSync(join(root, readme), 'utf8'), readme)
    all.snippets.push(...snippets)
    all.problems.push(...problems)
  }
  return all
}

/** The compiled-language blocks of one Markdown text, classified. */
export function extractSnippets(markdown: string, readme: string): Extracted {
  const lines = markdown.split('\n')
  const snippets: Snippet[] = []
  const problems: string[] = []
  const prefix =
    readme === 'README.md'
      ? 'readme'
      : readme.startsWith('packages/')
        ? `${readme.split('/')[1]}-readme`
        : readme
            .replace(/\.md$/, '')
            .replace(/[^\w-]+/g, '-')
            .toLowerCase()

  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)(.*)$/.exec(lines[i] as string)
    if (open === null) continue
    const [, indent = '', fence = '', info = ''] = open
    // The block's end: the same fence character, at least as long, alone on its line.
    let end = i + 1
    while (end < lines.length && !isClosing(lines[end] as string, fence)) end++
    const body = lines.slice(i + 1, end).map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line.trimStart()))
    const lang = COMPILED_LANGS.get(info.toLowerCase())
    const line = i + 1
    i = end
    if (lang === undefined) continue

    const where = `${readme}:${line}`
    const annotation = annotationBefore(lines, line - 1)
    const code = `${body.join('\n')}\n`
    const base = { readme, line, id: `${prefix}-${line}`, lang, code }
    const parsed = annotation === undefined ? undefined : parseAttributes(annotation)
    if (parsed instanceof Error) {
      problems.push(`${where}: ${parsed.message}`)
      continue
    }
    const snippet = classify(base, parsed, where, problems)
    if (snippet !== undefined) snippets.push(snippet)
  }
  return { snippets, problems }
}

function isClosing(line: string, fence: string): boolean {
  const trimmed = line.trim()
  return trimmed.length >= fence.length && trimmed === (fence[0] as string).repeat(trimmed.length)
}

/** The annotation on the last non-blank line before the fence at index `fenceIndex`, if any. */
function annotationBefore(lines: readonly string[], fenceIndex: number): string | undefined {
  for (let j = fenceIndex - 1; j >= 0; j--) {
    const text = (lines[j] as string).trim()
    if (text === '') continue
    return ANNOTATION.exec(text)?.[1]
  }
  return undefined
}

/** `file env=workers deliver=secret reason="two words"` → a map; bare words map to ''. */
function parseAttributes(text: string): Map<string, string> | Error {
  const attributes = new Map<string, string>()
  const token = /([\w-]+)(?:=(?:"([^"]*)"|(\S+)))?/gy
  let rest = text
  while (rest.length > 0) {
    rest = rest.trimStart()
    token.lastIndex = 0
    const match = token.exec(rest)
    if (match === null) return new Error(`cannot read the snippet annotation at "${rest}"`)
    const key = match[1] as string
    if (!KNOWN_KEYS.has(key)) return new Error(`unknown snippet attribute "${key}" (known: ${[...KNOWN_KEYS].join(', ')})`)
    attributes.set(key, match[2] ?? match[3] ?? '')
    rest = rest.slice(match[0].length)
  }
  return attributes
}

function classify(
  base: Pick<Snippet, 'readme' | 'line' | 'id' | 'lang' | 'code'>,
  attributes: Map<string, string> | undefined,
  where: string,
  problems: string[],
): Snippet | undefined {
  const snippet: Snippet = { ...base, kind: 'file', env: 'node', run: false, deliveries: [], tokenPath: '/webhooks/token', expect: 204 }
  if (attributes === undefined) {
    if (/^\s*(import|export)\s/m.test(base.code)) return snippet
    problems.push(
      `${where}: a code block with no import or export and no annotation; put <!-- snippet: context=NAME --> (a fragment) or <!-- snippet: nocompile reason="…" --> on the line before it`,
    )
    return undefined
  }

  const kinds = ['file', 'context', 'nocompile'].filter((key) => attributes.has(key))
  if (kinds.length !== 1) {
    problems.push(`${where}: a snippet annotation names exactly one of file, context=NAME, nocompile`)
    return undefined
  }
  if (attributes.has('nocompile')) {
    const reason = attributes.get('reason') ?? ''
    if (reason.trim() === '') {
      problems.push(`${where}: nocompile needs reason="…"`)
      return undefined
    }
    if (attributes.size > 2) problems.push(`${where}: nocompile takes only reason="…"`)
    return { ...snippet, kind: 'nocompile', reason }
  }
  if (attributes.has('context')) {
    const context = attributes.get('context') ?? ''
    if (context === '') problems.push(`${where}: context needs a name`)
    snippet.kind = 'fragment'
    snippet.context = context
  }

  const env = attributes.get('env') ?? 'node'
  if (env !== 'node' && env !== 'workers') problems.push(`${where}: env must be node or workers, not "${env}"`)
  else snippet.env = env
  snippet.run = attributes.has('run')

  const deliver = attributes.get('deliver')
  if (deliver !== undefined) {
    for (const item of deliver.split(',')) {
      const [mode = '', path = '/webhooks'] = item.split(':')
      if (!MODES.includes(mode)) problems.push(`${where}: deliver: "${mode}" is not a mode (${MODES.join(', ')})`)
      else if (!path.startsWith('/')) problems.push(`${where}: deliver: the path "${path}" must start with /`)
      else snippet.deliveries.push({ mode: mode as DeliveryMode, path })
    }
  }
  snippet.tokenPath = attributes.get('token') ?? snippet.tokenPath
  const expect = Number(attributes.get('expect') ?? 204)
  if (!Number.isInteger(expect) || expect < 200 || expect > 299) problems.push(`${where}: expect must be a 2xx status`)
  else snippet.expect = expect
  if (snippet.run && snippet.deliveries.length > 0) problems.push(`${where}: run (exit 0) and deliver (a server) exclude each other`)
  if (snippet.kind === 'fragment' && snippet.run)
    problems.push(`${where}: run is for complete files; a fragment runs only as a server (deliver=)`)
  return snippet
}

/** Whether a complete Node file starts a server: it must then say what to deliver to it. */
export function startsServer(snippet: Snippet): boolean {
  return snippet.kind === 'file' && snippet.env === 'node' && /\.listen\(|\bserve\(/.test(snippet.code)
}
