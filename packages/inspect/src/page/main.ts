/**
 * The inspector's page. Plain DOM, no framework. Every value that came from a request is written
 * with `textContent` (or as an attribute value), never as markup, and the server's CSP allows no
 * inline script: a payload holding `<script>` or `<img onerror>` is shown as the text it is.
 */

interface Summary {
  id: number
  kind: 'delivery' | 'token'
  time: number
  source: string
  method: string
  path: string
  mode: string
  verdict: 'verified' | 'refused'
  status: number
  code?: string
  hint?: string
  form?: string
  diagnosis?: string
  appStatus?: number
  appError?: string
  appCode?: string
  disagreement?: 'app_accepted' | 'app_refused'
  duplicate?: 'processing' | 'done'
  repeatOf?: number
  tokenId?: number
  usedBy?: number[]
  preset?: { name: string; expected: string }
  bodyBytes: number
  durationMs: number
}

interface Tried {
  variant: string
  secret: number
  digest8: string
  matched: boolean
}

interface Detail extends Summary {
  headers: [string, string][]
  bodyBase64: string
  bodyText?: string
  truncated: boolean
  covered?: { text: string; removed: boolean }[]
  payload?: string
  diagnosisDetail?: {
    outcome: string
    summary: string
    match?: { variant: string; secretLabel: string; explanation: string }
    matches: { variant: string; secretLabel: string; explanation: string }[]
    tried: Tried[]
    received8: string[]
    expected8: string
  }
  app?: { status?: number; error?: string; code?: string; headers: [string, string][]; bodyText: string; durationMs: number }
}

interface Preset {
  name: string
  label: string
  expected: string
}

interface State {
  mode: string
  forwardTo: string | null
  receive: string
  maxBodySize: number
  presets: Preset[]
  canResend: boolean
  records: Summary[]
}

interface Segment {
  text: string
  changed: boolean
}

interface Diff {
  a: number
  b: number
  headers: { name: string; a: string | null; b: string | null; same: boolean }[]
  body: { a: Segment[]; b: Segment[]; same: boolean }
  signed: { a: Segment[]; b: Segment[]; same: boolean }
}

type Child = Node | string | null | undefined | false

/** Builds an element; strings become text nodes, so nothing is ever parsed as markup. */
function h(tag: string, attrs: Record<string, string | undefined> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) if (value !== undefined) el.setAttribute(name, value)
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    el.append(typeof child === 'string' ? document.createTextNode(child) : child)
  }
  return el
}

const records = new Map<number, Summary>()
let state: State | undefined
let selected: number | undefined
let live = false

const app = document.getElementById('app') as HTMLElement
const statusBadge = h('span', { class: 'status', 'data-testid': 'status' }, 'connecting…')
const list = h('ol', { class: 'timeline', 'data-testid': 'timeline' })
const pane = h('section', { class: 'detail', 'data-testid': 'detail' }, h('p', { class: 'muted' }, 'Select a delivery.'))
const filters = {
  verdict: h('select', { 'aria-label': 'Verdict', 'data-testid': 'filter-verdict' }) as HTMLSelectElement,
  code: h('input', {
    type: 'search',
    placeholder: 'code or hint',
    'aria-label': 'Code or hint',
    'data-testid': 'filter-code',
  }) as HTMLInputElement,
  disagreement: h('input', {
    type: 'checkbox',
    'aria-label': 'Disagreements only',
    'data-testid': 'filter-disagreement',
  }) as HTMLInputElement,
}
for (const value of ['', 'verified', 'refused']) filters.verdict.append(h('option', { value }, value === '' ? 'all verdicts' : value))

/**
 * The access token: printed in the address's fragment (`#token=…`, which no browser sends to a
 * server), kept in this tab's sessionStorage (scoped to scheme, host and port, never sent
 * anywhere), taken out of the address bar, and sent in a header on every API call. No cookie.
 */
const TOKEN_KEY = 'hookguard-inspect-token'
let accessToken: string | null = null

function takeToken(): void {
  const match = /^#token=([^&]*)/.exec(location.hash)
  let stored: string | null = null
  try {
    if (match) sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1] ?? ''))
    stored = sessionStorage.getItem(TOKEN_KEY)
  } catch {
    // No storage (a locked-down profile): the token lasts as long as the page.
  }
  accessToken = stored ?? (match ? decodeURIComponent(match[1] ?? '') : null)
  if (match) history.replaceState(null, '', `${location.pathname}${location.search}`)
}

/** The page cannot reach the API without this run's token: says where to find it. */
class NoToken extends Error {}

function showNoToken(): void {
  try {
    // A token of an earlier run on this port: worth nothing now.
    sessionStorage.removeItem(TOKEN_KEY)
  } catch {
    // No storage.
  }
  app.replaceChildren(
    h(
      'p',
      { class: 'alert', 'data-testid': 'no-token' },
      'Open the address `hookguard inspect` printed (http://…/#token=…): it carries this run’s access token, which this tab does not have.',
    ),
  )
}

async function authorized(path: string, init?: RequestInit): Promise<Response> {
  if (accessToken === null) throw new NoToken('no access token')
  const response = await fetch(path, {
    ...init,
    headers: { ...(init?.headers as Record<string, string> | undefined), 'x-inspect-token': accessToken },
    credentials: 'omit',
    cache: 'no-store',
  })
  if (response.status === 401) {
    showNoToken()
    throw new NoToken('the access token was refused')
  }
  return response
}

async function api<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await authorized(path, {
    ...init,
    headers: { 'content-type': 'application/json', ...(init?.headers as Record<string, string> | undefined) },
  })
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`)
  const type = response.headers.get('content-type') ?? ''
  return (type.includes('json') ? await response.json() : await response.text()) as T
}

/** A download through fetch (the token in its header), saved from a Blob. */
async function download(path: string): Promise<void> {
  const response = await authorized(path)
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`)
  const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? 'export'
  const url = URL.createObjectURL(await response.blob())
  const link = h('a', { href: url, download: name, hidden: '' })
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}

function time(ms: number): string {
  return new Date(ms).toLocaleTimeString(undefined, { hour12: false })
}

function verdictLabel(r: Summary): string {
  if (r.kind === 'token') return r.verdict === 'verified' ? 'token issued' : 'token refused'
  if (r.duplicate === 'processing') return 'duplicate (in progress)'
  if (r.duplicate === 'done') return 'duplicate (done)'
  return r.verdict
}

function disagreementText(d: Summary['disagreement']): string {
  return d === 'app_accepted' ? 'your app accepted what hookguard refuses' : 'your app refused what hookguard verifies'
}

function matchesFilters(r: Summary): boolean {
  if (filters.verdict.value !== '' && r.verdict !== filters.verdict.value) return false
  const code = filters.code.value.trim()
  if (code !== '' && r.code !== code && r.hint !== code && r.diagnosis !== code) return false
  if (filters.disagreement.checked && r.disagreement === undefined) return false
  return true
}

function row(r: Summary): HTMLElement {
  const tags: Child[] = []
  if (r.code) tags.push(h('span', { class: 'tag code' }, r.code))
  if (r.hint) tags.push(h('span', { class: 'tag hint' }, `hint ${r.hint}`))
  if (r.diagnosis) tags.push(h('span', { class: 'tag diag' }, `diagnosis ${r.diagnosis}`))
  if (r.appStatus !== undefined) tags.push(h('span', { class: 'tag app' }, `app ${r.appStatus}`))
  if (r.appError) tags.push(h('span', { class: 'tag bad' }, `app ${r.appError}`))
  if (r.disagreement) tags.push(h('span', { class: 'tag bad', 'data-testid': 'disagreement' }, `⚠ ${disagreementText(r.disagreement)}`))
  if (r.repeatOf !== undefined) tags.push(h('span', { class: 'tag' }, `repeat of #${r.repeatOf}`))
  if (r.tokenId !== undefined) tags.push(h('span', { class: 'tag' }, `token #${r.tokenId}`))
  const usedBy = [...records.values()].filter((d) => d.tokenId === r.id).map((d) => `#${d.id}`)
  if (r.kind === 'token' && usedBy.length > 0) tags.push(h('span', { class: 'tag' }, `used by ${usedBy.join(' ')}`))
  if (r.source !== 'sender') tags.push(h('span', { class: 'tag' }, r.preset ? `preset ${r.preset.name}` : r.source))
  const link = h(
    'a',
    {
      href: `#/d/${r.id}`,
      class: `row ${r.verdict}${r.id === selected ? ' selected' : ''}`,
      'data-id': String(r.id),
      'data-testid': 'row',
    },
    h('span', { class: 'id' }, `#${r.id}`),
    h('span', { class: 'time' }, time(r.time)),
    h('span', { class: 'verdict', 'data-testid': 'verdict' }, verdictLabel(r)),
    h('span', { class: 'mode' }, r.mode),
    h('span', { class: 'path' }, `${r.method} ${r.path}`),
    h('span', { class: 'tags' }, ...tags),
  )
  return h('li', {}, link)
}

function renderList(): void {
  const items = [...records.values()].filter(matchesFilters).sort((a, b) => b.id - a.id)
  list.replaceChildren(...items.map(row))
  if (items.length === 0) list.append(h('li', { class: 'muted' }, 'No deliveries yet. Send one to the receiving address.'))
  document.title = `hookguard inspect (${records.size})`
}

function syncQuery(): void {
  const url = new URL(location.href)
  for (const [name, value] of [
    ['verdict', filters.verdict.value],
    ['code', filters.code.value.trim()],
    ['disagreement', filters.disagreement.checked ? '1' : ''],
  ] as const) {
    if (value === '') url.searchParams.delete(name)
    else url.searchParams.set(name, value)
  }
  history.replaceState(null, '', url)
  renderList()
}

function readQuery(): void {
  const params = new URL(location.href).searchParams
  filters.verdict.value = params.get('verdict') ?? ''
  filters.code.value = params.get('code') ?? ''
  filters.disagreement.checked = params.get('disagreement') === '1'
  const id = params.get('id')
  if (id !== null && location.hash === '') location.hash = `#/d/${id}`
}

function base64Bytes(text: string): Uint8Array {
  const binary = atob(text)
  const out = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i)
  return out
}

function hexDump(bytes: Uint8Array): string {
  const lines: string[] = []
  const max = Math.min(bytes.length, 64 * 1024)
  for (let offset = 0; offset < max; offset += 16) {
    const slice = bytes.subarray(offset, Math.min(offset + 16, max))
    const hex = [...slice].map((b) => b.toString(16).padStart(2, '0')).join(' ')
    const ascii = [...slice].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('')
    lines.push(`${offset.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${ascii}`)
  }
  if (bytes.length > max) lines.push(`… ${bytes.length - max} more bytes`)
  return lines.join('\n')
}

const GLYPH: Record<string, string> = { ' ': '·', '\t': '→', '\n': '↵\n', '\r': '␍', '\f': '␌', '\u000B': '␋' }

function coveredView(segments: { text: string; removed: boolean }[]): HTMLElement {
  const pre = h('pre', { class: 'covered', 'data-testid': 'covered' })
  for (const s of segments) {
    pre.append(
      s.removed
        ? h('span', { class: 'ws', title: 'removed before signing' }, [...s.text].map((c) => GLYPH[c] ?? c).join(''))
        : document.createTextNode(s.text),
    )
  }
  return pre
}

function table(rows: [string, string][], testid?: string): HTMLElement {
  return h('table', { class: 'kv', 'data-testid': testid }, ...rows.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v))))
}

function section(title: string, ...children: Child[]): HTMLElement {
  return h('section', { class: 'block' }, h('h3', {}, title), ...children)
}

function answersText(answers: { status: number; code?: string }[]): string {
  return answers.map((a) => `${a.status}${a.code ? ` ${a.code}` : ''}`).join(', ')
}

async function showDetail(id: number): Promise<void> {
  selected = id
  renderList()
  let d: Detail
  try {
    d = await api<Detail>(`/api/records/${id}`)
  } catch {
    pane.replaceChildren(h('p', { class: 'muted' }, `#${id} is no longer kept.`))
    return
  }
  const facts: [string, string][] = [
    ['verdict', verdictLabel(d)],
    ['hookguard status', String(d.status)],
  ]
  if (d.code) facts.push(['code', d.code])
  if (d.hint) facts.push(['hint', d.hint])
  if (d.form) facts.push(['signed form', d.form])
  if (d.appStatus !== undefined) facts.push(['app status', String(d.appStatus)])
  if (d.appError)
    facts.push(['app', d.appError === 'timeout' ? 'did not answer in time (504 to the sender)' : 'not reachable (502 to the sender)'])
  if (d.preset) facts.push(['preset', `${d.preset.name}: should get ${d.preset.expected}`])
  facts.push(['mode', d.mode], ['time', new Date(d.time).toISOString()], ['size', `${d.bodyBytes} bytes`], ['took', `${d.durationMs} ms`])

  const blocks: Child[] = [
    h('h2', {}, `#${d.id} ${d.method} ${d.path}`),
    h('p', {}, h('a', { href: `#/d/${d.id}`, 'data-testid': 'permalink' }, 'Permalink')),
    d.disagreement
      ? h('p', { class: 'alert', 'data-testid': 'disagreement-detail' }, `⚠ Disagreement: ${disagreementText(d.disagreement)}.`)
      : null,
    table(facts, 'facts'),
  ]
  const links: Child[] = []
  if (d.tokenId !== undefined) links.push(h('a', { href: `#/d/${d.tokenId}` }, `token request #${d.tokenId}`))
  for (const used of d.usedBy ?? []) links.push(' ', h('a', { href: `#/d/${used}` }, `delivery #${used}`))
  if (links.length > 0) blocks.push(h('p', {}, 'Linked: ', ...links))

  const diag = d.diagnosisDetail
  if (diag) {
    blocks.push(
      section(
        'Diagnosis',
        h('p', { 'data-testid': 'diagnosis' }, diag.summary),
        table(
          [
            ['received (first 8 hex)', diag.received8.join(', ') || '(none)'],
            ['computed, service form, secret #1', diag.expected8],
          ],
          'digests',
        ),
        ...diag.matches.map((m) => h('p', { class: 'match' }, `✔ ${m.variant} with secret ${m.secretLabel}: ${m.explanation}`)),
        h(
          'details',
          {},
          h('summary', {}, `Every variant tried (${diag.tried.length})`),
          h(
            'table',
            { class: 'kv' },
            h('tr', {}, h('th', {}, 'variant'), h('th', {}, 'secret'), h('th', {}, 'digest'), h('th', {}, '')),
            ...diag.tried.map((t) =>
              h(
                'tr',
                {},
                h('td', {}, t.variant),
                h('td', {}, `#${t.secret}`),
                h('td', {}, t.digest8),
                h('td', {}, t.matched ? 'matches' : ''),
              ),
            ),
          ),
        ),
      ),
    )
  }
  blocks.push(section('Headers', table(d.headers, 'headers')))
  if (d.kind === 'token') {
    blocks.push(section('Body (credentials replaced)', h('pre', { 'data-testid': 'body-text' }, d.bodyText ?? '')))
  } else {
    const bytes = base64Bytes(d.bodyBase64)
    const text = new TextDecoder().decode(bytes)
    blocks.push(
      section(
        `Body as received${d.truncated ? ' (cut at the size limit)' : ''}`,
        h('pre', { 'data-testid': 'body-text' }, text),
        h('details', {}, h('summary', {}, 'Hex'), h('pre', { class: 'hex', 'data-testid': 'body-hex' }, hexDump(bytes))),
      ),
    )
    if (d.covered) blocks.push(section('Text the signature covers (marked: whitespace removed before signing)', coveredView(d.covered)))
    if (d.payload !== undefined) blocks.push(section('Parsed payload', h('pre', { 'data-testid': 'payload' }, d.payload)))
  }
  if (d.app) {
    blocks.push(
      section(
        'App answer',
        table(
          [
            ['status', d.app.status === undefined ? (d.app.error ?? '') : String(d.app.status)],
            ['took', `${d.app.durationMs} ms`],
            ...d.app.headers,
          ],
          'app-answer',
        ),
        h('pre', {}, d.app.bodyText),
      ),
    )
  }
  if (d.kind === 'delivery') blocks.push(actions(d))
  pane.replaceChildren(...blocks.filter((b): b is HTMLElement => b instanceof HTMLElement))
}

function actions(d: Detail): HTMLElement {
  const result = h('p', { class: 'result', 'data-testid': 'action-result', 'aria-live': 'polite' })
  const count = h('input', {
    type: 'number',
    min: '1',
    max: '20',
    value: '1',
    'aria-label': 'Times',
    'data-testid': 'replay-count',
  }) as HTMLInputElement
  const replayButton = h('button', { type: 'button', 'data-testid': 'replay' }, 'Replay')
  replayButton.addEventListener('click', async () => {
    result.textContent = 'Replaying…'
    try {
      const { answers } = await api<{ answers: { status: number; code?: string }[] }>(`/api/records/${d.id}/replay`, {
        method: 'POST',
        body: JSON.stringify({ count: Number(count.value) }),
      })
      result.textContent = `Answers: ${answersText(answers)}`
    } catch (error) {
      result.textContent = `Failed: ${(error as Error).message}`
    }
  })

  const output = h('pre', { class: 'export', 'data-testid': 'export-output' })
  const exportButtons = (['send', 'curl', 'har', 'fixture', 'fixture-test'] as const).map((format) => {
    const button = h('button', { type: 'button', 'data-testid': `export-${format}` }, format === 'send' ? 'hookguard send' : format)
    button.addEventListener('click', async () => {
      try {
        output.textContent = await (await authorized(`/api/records/${d.id}/export/${format}`)).text()
      } catch (error) {
        output.textContent = `Failed: ${(error as Error).message}`
      }
    })
    return button
  })
  const copy = h('button', { type: 'button' }, 'Copy')
  copy.addEventListener('click', () => void navigator.clipboard?.writeText(output.textContent ?? ''))
  const downloadButton = (format: string, label: string) => {
    const button = h('button', { type: 'button', class: 'link', 'data-testid': `download-${format}` }, label)
    button.addEventListener('click', () => {
      download(`/api/records/${d.id}/export/${format}?download=1`).catch((error: unknown) => {
        output.textContent = `Failed: ${(error as Error).message}`
      })
    })
    return button
  }
  const downloads = h(
    'p',
    {},
    'Download: ',
    downloadButton('fixture', 'fixture JSON'),
    ' · ',
    downloadButton('fixture-test', 'Vitest file'),
    ' · ',
    downloadButton('har', 'HAR'),
  )

  const other = h('input', {
    type: 'number',
    min: '1',
    placeholder: 'other #',
    'aria-label': 'Compare with',
    'data-testid': 'diff-with',
  }) as HTMLInputElement
  const diffButton = h('button', { type: 'button', 'data-testid': 'diff' }, 'Diff')
  diffButton.addEventListener('click', () => {
    if (other.value !== '') location.hash = `#/diff/${d.id}/${other.value}`
  })
  const editButton = h('button', { type: 'button', 'data-testid': 'edit' }, 'Edit and resend')
  editButton.addEventListener('click', () => {
    composerPath.value = d.path.split('?')[0] ?? '/'
    composerBody.value = new TextDecoder().decode(base64Bytes(d.bodyBase64))
    composer.scrollIntoView()
  })
  return section(
    'Actions',
    h('p', { class: 'row-actions' }, count, replayButton, editButton, other, diffButton),
    result,
    h('p', { class: 'row-actions' }, 'Export: ', ...exportButtons, copy),
    downloads,
    output,
  )
}

function segmentsView(segments: Segment[], testid: string): HTMLElement {
  const pre = h('pre', { 'data-testid': testid })
  for (const s of segments) pre.append(s.changed ? h('mark', {}, s.text) : document.createTextNode(s.text))
  return pre
}

async function showDiff(a: number, b: number): Promise<void> {
  let diff: Diff
  try {
    diff = await api<Diff>(`/api/diff?a=${a}&b=${b}`)
  } catch {
    pane.replaceChildren(h('p', { class: 'muted' }, 'Both must be deliveries still kept.'))
    return
  }
  pane.replaceChildren(
    h('h2', {}, `Diff #${a} ↔ #${b}`),
    section(
      'Headers',
      h(
        'table',
        { class: 'kv', 'data-testid': 'diff-headers' },
        h('tr', {}, h('th', {}, 'name'), h('th', {}, `#${a}`), h('th', {}, `#${b}`)),
        ...diff.headers.map((x) =>
          h('tr', { class: x.same ? '' : 'changed' }, h('td', {}, x.name), h('td', {}, x.a ?? '—'), h('td', {}, x.b ?? '—')),
        ),
      ),
    ),
    section(
      `Bytes${diff.body.same ? ' (identical)' : ''}`,
      h('div', { class: 'split' }, segmentsView(diff.body.a, 'diff-body-a'), segmentsView(diff.body.b, 'diff-body-b')),
    ),
    section(
      `Signed text${diff.signed.same ? ' (identical)' : ''}`,
      h('div', { class: 'split' }, segmentsView(diff.signed.a, 'diff-signed-a'), segmentsView(diff.signed.b, 'diff-signed-b')),
    ),
  )
}

const composerPath = h('input', { type: 'text', value: '/', 'aria-label': 'Path', 'data-testid': 'composer-path' }) as HTMLInputElement
const composerBody = h('textarea', { rows: '6', 'aria-label': 'Body', 'data-testid': 'composer-body' }) as HTMLTextAreaElement
composerBody.value = '{"event":"order.paid","data":{"url":"https://shop.example.com/p?id=42&utm=x","note":"5 < 6"}}'
const presetSelect = h('select', { 'aria-label': 'Preset', 'data-testid': 'preset' }) as HTMLSelectElement
const composerResult = h('p', { class: 'result', 'data-testid': 'composer-result', 'aria-live': 'polite' })
const composer = h('section', { class: 'composer block' })

function buildComposer(s: State): void {
  presetSelect.replaceChildren(...s.presets.map((p) => h('option', { value: p.name }, `${p.label} → ${p.expected}`)))
  const resend = h('button', { type: 'button', 'data-testid': 'resend' }, `Send, signed (${s.mode})`)
  if (!s.canResend) resend.setAttribute('disabled', '')
  resend.addEventListener('click', async () => {
    composerResult.textContent = 'Sending…'
    try {
      const { answers } = await api<{ answers: { status: number; code?: string }[] }>('/api/resend', {
        method: 'POST',
        body: JSON.stringify({ path: composerPath.value, body: composerBody.value }),
      })
      composerResult.textContent = `Answer: ${answersText(answers)}`
    } catch (error) {
      composerResult.textContent = `Failed: ${(error as Error).message}`
    }
  })
  const forge = h('button', { type: 'button', 'data-testid': 'send-preset' }, 'Send preset')
  forge.addEventListener('click', async () => {
    composerResult.textContent = 'Sending…'
    try {
      const { answers, expected } = await api<{ answers: { status: number; code?: string }[]; expected: string }>('/api/preset', {
        method: 'POST',
        body: JSON.stringify({ name: presetSelect.value, path: composerPath.value, body: composerBody.value }),
      })
      composerResult.textContent = `Answer: ${answersText(answers)} (expected ${expected})`
    } catch (error) {
      composerResult.textContent = `Failed: ${(error as Error).message}`
    }
  })
  composer.replaceChildren(
    h('h3', {}, 'Compose'),
    h('label', {}, 'Path ', composerPath),
    composerBody,
    h('p', { class: 'row-actions' }, resend),
    h('p', { class: 'row-actions' }, presetSelect, forge),
    composerResult,
  )
}

function route(): void {
  if (/^#token=/.test(location.hash)) {
    // The printed address pasted into an open page: its token replaces the one kept.
    takeToken()
    location.reload()
    return
  }
  const diff = /^#\/diff\/(\d+)\/(\d+)$/.exec(location.hash)
  if (diff) {
    void showDiff(Number(diff[1]), Number(diff[2]))
    return
  }
  const one = /^#\/d\/(\d+)$/.exec(location.hash)
  if (one) void showDetail(Number(one[1]))
}

function setLive(on: boolean): void {
  live = on
  statusBadge.textContent = on ? 'live' : 'disconnected: retrying…'
  statusBadge.className = on ? 'status live' : 'status down'
}

function onEvent(type: string, data: string): void {
  if (type === 'ready') setLive(true)
  else if (type === 'record') {
    const summary = JSON.parse(data) as Summary
    records.set(summary.id, summary)
    renderList()
  } else if (type === 'deleted') {
    records.delete((JSON.parse(data) as { id: number }).id)
    renderList()
  } else if (type === 'cleared') {
    records.clear()
    renderList()
  }
}

/**
 * The event stream, read with fetch so that it carries the token in its header (EventSource
 * sends none): server-sent events parsed here, and the stream opened again when it drops, the
 * list reloaded then, as what happened meanwhile was not streamed.
 */
async function connect(): Promise<void> {
  let again = false
  for (;;) {
    try {
      const response = await authorized('/api/events', { headers: { accept: 'text/event-stream' } })
      if (!response.ok || response.body === null) throw new Error(String(response.status))
      if (again) {
        const fresh = await api<State>('/api/state')
        records.clear()
        for (const r of fresh.records) records.set(r.id, r)
        renderList()
      }
      const reader = response.body.getReader()
      const decoder = new TextDecoder()
      let buffer = ''
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n')
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          let type = 'message'
          const data: string[] = []
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue
            const colon = line.indexOf(':')
            const field = colon < 0 ? line : line.slice(0, colon)
            const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
            if (field === 'event') type = text
            else if (field === 'data') data.push(text)
          }
          if (data.length > 0 || type !== 'message') onEvent(type, data.join('\n'))
        }
      }
    } catch (error) {
      if (error instanceof NoToken) return
    }
    setLive(false)
    again = true
    await new Promise((resolve) => setTimeout(resolve, 2000))
  }
}

async function start(): Promise<void> {
  takeToken()
  if (accessToken === null) {
    showNoToken()
    return
  }
  readQuery()
  state = await api<State>('/api/state')
  for (const r of state.records) records.set(r.id, r)
  for (const input of [filters.verdict, filters.code, filters.disagreement]) input.addEventListener('input', syncQuery)
  buildComposer(state)
  const where = state.forwardTo === null ? `answering as hookguard (${state.mode})` : `in front of ${state.forwardTo} (${state.mode})`
  app.replaceChildren(
    h('header', {}, h('h1', {}, 'hookguard inspect'), h('span', { class: 'where' }, `${state.receive} · ${where}`), statusBadge),
    h('nav', { class: 'filters' }, filters.verdict, filters.code, h('label', {}, filters.disagreement, ' disagreements only')),
    h('main', {}, h('div', { class: 'left' }, list, composer), pane),
  )
  renderList()
  window.addEventListener('hashchange', route)
  route()
  void connect()
  void live
}

void start().catch((error: unknown) => {
  if (error instanceof NoToken) return
  app.replaceChildren(h('p', { class: 'alert' }, `The inspector could not be reached: ${(error as Error).message}`))
})
