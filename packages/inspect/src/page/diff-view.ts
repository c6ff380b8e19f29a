import type { DiffSegment, RecordDiff } from '../diff.ts'
import { api } from './api.ts'
import { h, section } from './dom.ts'
import { longText } from './long-text.ts'

const changed = (text: string): HTMLElement => h('mark', {}, text)

function segmentsView(segments: DiffSegment[], testid: string): HTMLElement {
  return longText(
    { 'data-testid': testid },
    segments.map((s) => (s.changed ? { text: s.text, mark: changed } : { text: s.text })),
  )
}

/** Two deliveries side by side in `pane`: headers, bytes and signed text, what differs marked. `current`: as for showDetail. */
export async function showDiff(pane: HTMLElement, a: number, b: number, current: () => boolean = () => true): Promise<void> {
  let diff: RecordDiff
  try {
    diff = await api<RecordDiff>(`/api/diff?a=${a}&b=${b}`)
  } catch {
    if (current()) pane.replaceChildren(h('p', { class: 'muted' }, 'Both must be deliveries still kept.'))
    return
  }
  if (!current()) return
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
