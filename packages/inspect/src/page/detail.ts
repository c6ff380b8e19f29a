import type { RecordDetail } from '../view.ts'
import { api } from './api.ts'
import { base64Bytes, hexDump } from './bytes.ts'
import { deliveryActions } from './delivery-actions.ts'
import { type Child, h, section, table } from './dom.ts'
import { disagreementText, verdictLabel } from './format.ts'
import { longText } from './long-text.ts'
import { prettyPayload } from './pretty.ts'

/**
 * A delivery's detail, in the pane beside the timeline: its facts, the diagnosis, headers, the
 * body as text and hex, the text the signature covers, the app's answer, and its actions.
 */

const GLYPH: Record<string, string> = { ' ': '·', '\t': '→', '\n': '↵\n', '\r': '␍', '\f': '␌', '\u000B': '␋' }

const removed = (text: string): HTMLElement =>
  h('span', { class: 'ws', title: 'removed before signing' }, [...text].map((c) => GLYPH[c] ?? c).join(''))

function coveredView(segments: NonNullable<RecordDetail['covered']>): HTMLElement {
  return longText(
    { class: 'covered', 'data-testid': 'covered' },
    segments.map((s) => (s.removed ? { text: s.text, mark: removed } : { text: s.text })),
  )
}

/**
 * The body in hex, made when the reader first opens it: a detail opened by itself, one a frame in a
 * burst, would otherwise dump every body's 64 KiB of hex that nobody looks at.
 */
function hexView(bytes: Uint8Array): HTMLElement {
  const details = h('details', {}, h('summary', {}, 'Hex')) as HTMLDetailsElement
  details.addEventListener(
    'toggle',
    () => {
      if (details.open) details.append(longText({ class: 'hex', 'data-testid': 'body-hex' }, hexDump(bytes)))
    },
    { once: true },
  )
  return details
}

function diagnosisBlock(diag: NonNullable<RecordDetail['diagnosisDetail']>): HTMLElement {
  return section(
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
          h('tr', {}, h('td', {}, t.variant), h('td', {}, `#${t.secret}`), h('td', {}, t.digest8), h('td', {}, t.matched ? 'matches' : '')),
        ),
      ),
    ),
  )
}

function facts(d: RecordDetail): [string, string][] {
  const rows: [string, string][] = [
    ['verdict', verdictLabel(d)],
    ['hookguard status', String(d.status)],
  ]
  if (d.code) rows.push(['code', d.code])
  if (d.hint) rows.push(['hint', d.hint])
  if (d.form) rows.push(['signed form', d.form])
  if (d.appStatus !== undefined) rows.push(['app status', String(d.appStatus)])
  if (d.queuedJob !== undefined) rows.push(['queued', `job ${d.queuedJob}, for a worker (the app's handoff)`])
  if (d.appError)
    rows.push(['app', d.appError === 'timeout' ? 'did not answer in time (504 to the sender)' : 'not reachable (502 to the sender)'])
  // The header names are the sender's text: written as text, like every other value here.
  if (d.notForwarded)
    rows.push(['not forwarded', `${d.notForwarded.join(', ')} (named in Connection: judged here, dropped before the app)`])
  if (d.annotationFailed) rows.push(['notes', 'a hint, link or disagreement could not be made for this request; the verdict stands'])
  if (d.preset) rows.push(['preset', `${d.preset.name}: should get ${d.preset.expected}`])
  rows.push(['mode', d.mode], ['time', new Date(d.time).toISOString()], ['size', `${d.bodyBytes} bytes`], ['took', `${d.durationMs} ms`])
  return rows
}

/**
 * Bodies up to this size have their payload printed with the detail; a larger one's once the reader
 * opens it. Parsing is one step no task can cut, and its cost is the sender's pick: a megabyte of
 * distinct keys took one task of 260 ms of CPU, where this size takes about an eighth of that.
 */
const PRINTED_WITH_DETAIL = 128 * 1024

/** The parsed payload's section, or none when the body was cut at the size limit (it is not what was sent). */
function payloadView(bytes: Uint8Array, truncated: boolean): HTMLElement | undefined {
  if (truncated) return undefined
  const printed = (payload: string | undefined) => (payload === undefined ? undefined : longText({ 'data-testid': 'payload' }, payload))
  if (bytes.byteLength <= PRINTED_WITH_DETAIL) {
    const view = printed(prettyPayload(bytes))
    return view === undefined ? undefined : section('Parsed payload', view)
  }
  const details = h('details', { 'data-testid': 'payload-later' }, h('summary', {}, 'Printed when opened')) as HTMLDetailsElement
  details.addEventListener(
    'toggle',
    () => {
      if (details.open) details.append(printed(prettyPayload(bytes)) ?? h('p', { class: 'muted' }, 'Not JSON, or too long to print.'))
    },
    { once: true },
  )
  return section('Parsed payload', details)
}

/**
 * How long building a detail may run before it lets the page's other tasks in. A delivery of the
 * 1 MiB size limit took one task of 138 ms of CPU to show (over 200 ms beside other work), most of
 * it the response's arrival when that carried the parsed payload as well as the body; the payload
 * is printed here, from the body, in a task of its own. A small delivery is still shown in one.
 */
const TASK_BUDGET_MS = 16

/**
 * A step's end: resolves at once while the calling task is within its budget, and otherwise in a
 * later task; with whether the pane still wants this detail (`current`).
 */
function stepper(current: () => boolean): () => Promise<boolean> {
  let since = performance.now()
  return async () => {
    if (performance.now() - since >= TASK_BUDGET_MS) {
      await new Promise((resolve) => setTimeout(resolve, 0))
      since = performance.now()
    }
    return current()
  }
}

/**
 * Shows record `id` in `pane`, fetched from the server (which redacts it); `onEdit` puts a body in
 * the composer. `current` says whether the pane still wants it once fetched: a detail opened later
 * (a click after the page opened one by itself) is not replaced by this one arriving last.
 */
export async function showDetail(
  pane: HTMLElement,
  id: number,
  onEdit: (path: string, body: string) => void,
  current: () => boolean = () => true,
): Promise<void> {
  let d: RecordDetail
  try {
    d = await api<RecordDetail>(`/api/records/${id}`)
  } catch {
    if (current()) pane.replaceChildren(h('p', { class: 'muted' }, `#${id} is no longer kept.`))
    return
  }
  if (!current()) return
  const stepped = stepper(current)
  const blocks: Child[] = [
    h('h2', {}, `#${d.id} ${d.method} ${d.path}`),
    h('p', {}, h('a', { href: `#/d/${d.id}`, 'data-testid': 'permalink' }, 'Permalink')),
    d.disagreement
      ? h('p', { class: 'alert', 'data-testid': 'disagreement-detail' }, `⚠ Disagreement: ${disagreementText(d.disagreement)}.`)
      : null,
    table(facts(d), 'facts'),
  ]
  const links: Child[] = []
  if (d.tokenId !== undefined) links.push(h('a', { href: `#/d/${d.tokenId}` }, `token request #${d.tokenId}`))
  for (const used of d.usedBy ?? []) links.push(' ', h('a', { href: `#/d/${used}` }, `delivery #${used}`))
  if (links.length > 0) blocks.push(h('p', {}, 'Linked: ', ...links))
  if (d.diagnosisDetail) blocks.push(diagnosisBlock(d.diagnosisDetail))
  blocks.push(section('Headers', table(d.headers, 'headers')))
  if (d.kind === 'token') {
    blocks.push(section('Body (credentials replaced)', longText({ 'data-testid': 'body-text' }, d.bodyText ?? '')))
  } else {
    // Each step takes a task of its own once the body is large; a detail opened meanwhile takes
    // the pane, and this one stops.
    const bytes = base64Bytes(d.bodyBase64)
    const text = new TextDecoder().decode(bytes)
    if (!(await stepped())) return
    blocks.push(
      section(
        `Body as received${d.truncated ? ' (cut at the size limit)' : ''}`,
        longText({ 'data-testid': 'body-text' }, text),
        hexView(bytes),
      ),
    )
    if (!(await stepped())) return
    if (d.covered) blocks.push(section('Text the signature covers (marked: whitespace removed before signing)', coveredView(d.covered)))
    if (!(await stepped())) return
    // The redacted body's JSON, pretty-printed within pretty.ts's bound.
    const payload = payloadView(bytes, d.truncated)
    if (!(await stepped())) return
    if (payload !== undefined) blocks.push(payload)
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
        longText({}, d.app.bodyText),
      ),
    )
  }
  if (d.kind === 'delivery') blocks.push(deliveryActions(d, onEdit))
  pane.replaceChildren(...blocks.filter((b): b is HTMLElement => b instanceof HTMLElement))
}
