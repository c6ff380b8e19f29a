import type { RecordSummary } from '../view.ts'
import { type Child, h } from './dom.ts'
import { clipped, clockTime, disagreementText, verdictLabel } from './format.ts'
import type { Records } from './records.ts'

/**
 * The timeline: one row per record kept, newest first, filtered by verdict, code and
 * disagreement (the filters live in the address's query). Rows are drawn again only when their
 * record changes, in an animation frame that draws every change since the last one, at most one
 * such frame per {@link FRAME_INTERVAL_MS}; a frame stops drawing after {@link FRAME_BUDGET_MS}
 * and leaves the rest to the next. A burst of deliveries keeps the page responsive: each frame
 * draws the rows that changed, never the whole list, and only rows on screen are laid out (style.css).
 */

const FRAME_BUDGET_MS = 8
/** A row's method and path: two lines of the list at most; the detail shows the whole. */
const ROW_PATH_CHARS = 160
const FRAME_INTERVAL_MS = 100
/** Drawn anyway when no frame comes (a tab in the background gets none). */
const FALLBACK_MS = 250

export interface Timeline {
  /** The filters, for the page's header. */
  filters: HTMLElement
  /** The list itself. */
  element: HTMLElement
  /** Rows to draw again (added, changed, gone), at the next frame. */
  changed(ids: Iterable<number>): void
  /** Marks the row of `id` as the one whose detail is open. */
  select(id: number | undefined): void
  /** Runs `then` once every change so far is drawn. */
  whenDrawn(then: () => void): void
}

export function createTimeline(records: Records): Timeline {
  const verdict = h('select', { 'aria-label': 'Verdict', 'data-testid': 'filter-verdict' }) as HTMLSelectElement
  for (const value of ['', 'verified', 'refused']) verdict.append(h('option', { value }, value === '' ? 'all verdicts' : value))
  const code = h('input', {
    type: 'search',
    placeholder: 'code or hint',
    'aria-label': 'Code or hint',
    'data-testid': 'filter-code',
  }) as HTMLInputElement
  const disagreement = h('input', {
    type: 'checkbox',
    'aria-label': 'Disagreements only',
    'data-testid': 'filter-disagreement',
  }) as HTMLInputElement
  const list = h('ol', { class: 'timeline', 'data-testid': 'timeline' })
  const empty = h('p', { class: 'muted' }, 'No deliveries yet. Send one to the receiving address.')
  const element = h('div', {}, list, empty)

  /** The rows in the list, and their ids newest first, in the list's order. */
  const rows = new Map<number, HTMLElement>()
  const order: number[] = []
  const dirty = new Set<number>()
  const waiting: (() => void)[] = []
  let selected: number | undefined
  let pending = false
  let lastFlush = Number.NEGATIVE_INFINITY
  let frame: number | undefined
  let timer: ReturnType<typeof setTimeout> | undefined

  const params = new URL(location.href).searchParams
  verdict.value = params.get('verdict') ?? ''
  code.value = params.get('code') ?? ''
  disagreement.checked = params.get('disagreement') === '1'
  for (const input of [verdict, code, disagreement]) input.addEventListener('input', filtered)

  function matches(r: RecordSummary): boolean {
    if (verdict.value !== '' && r.verdict !== verdict.value) return false
    const wanted = code.value.trim()
    if (wanted !== '' && r.code !== wanted && r.hint !== wanted && r.diagnosis !== wanted) return false
    if (disagreement.checked && r.disagreement === undefined) return false
    return true
  }

  function filtered(): void {
    const url = new URL(location.href)
    for (const [name, value] of [
      ['verdict', verdict.value],
      ['code', code.value.trim()],
      ['disagreement', disagreement.checked ? '1' : ''],
    ] as const) {
      if (value === '') url.searchParams.delete(name)
      else url.searchParams.set(name, value)
    }
    history.replaceState(null, '', url)
    changed(records.ids())
  }

  function row(r: RecordSummary): HTMLElement {
    const tags: Child[] = []
    if (r.code) tags.push(h('span', { class: 'tag code' }, r.code))
    if (r.hint) tags.push(h('span', { class: 'tag hint' }, `hint ${r.hint}`))
    if (r.diagnosis) tags.push(h('span', { class: 'tag diag' }, `diagnosis ${r.diagnosis}`))
    if (r.appStatus !== undefined) tags.push(h('span', { class: 'tag app' }, `app ${r.appStatus}`))
    if (r.appError) tags.push(h('span', { class: 'tag bad' }, `app ${r.appError}`))
    if (r.queuedJob !== undefined) tags.push(h('span', { class: 'tag app', 'data-testid': 'queued' }, `queued ${r.queuedJob}`))
    if (r.disagreement) tags.push(h('span', { class: 'tag bad', 'data-testid': 'disagreement' }, `⚠ ${disagreementText(r.disagreement)}`))
    if (r.repeatOf !== undefined) tags.push(h('span', { class: 'tag' }, `repeat of #${r.repeatOf}`))
    if (r.tokenId !== undefined) tags.push(h('span', { class: 'tag' }, `token #${r.tokenId}`))
    const usedBy = r.kind === 'token' ? records.usedBy(r.id) : []
    if (usedBy.length > 0) tags.push(h('span', { class: 'tag' }, `used by ${usedBy.map((id) => `#${id}`).join(' ')}`))
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
      h('span', { class: 'time' }, clockTime(r.time)),
      h('span', { class: 'verdict', 'data-testid': 'verdict' }, verdictLabel(r)),
      h('span', { class: 'mode' }, r.mode),
      h('span', { class: 'path' }, clipped(`${r.method} ${r.path}`, ROW_PATH_CHARS)),
      h('span', { class: 'tags' }, ...tags),
    )
    return h('li', {}, link)
  }

  /** Where `id` goes in `order` (newest first): a binary search. */
  function position(id: number): number {
    let low = 0
    let high = order.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if ((order[middle] as number) > id) low = middle + 1
      else high = middle
    }
    return low
  }

  /** The row of `id` as its record now is: drawn, replaced, or taken out. */
  function draw(id: number): void {
    const r = records.get(id)
    const old = rows.get(id)
    if (r === undefined || !matches(r)) {
      if (old === undefined) return
      old.remove()
      rows.delete(id)
      order.splice(position(id), 1)
      return
    }
    const fresh = row(r)
    rows.set(id, fresh)
    if (old !== undefined) {
      old.replaceWith(fresh)
      return
    }
    const at = position(id)
    const next = order[at]
    list.insertBefore(fresh, next === undefined ? null : (rows.get(next) ?? null))
    order.splice(at, 0, id)
  }

  function flush(): void {
    if (frame !== undefined) cancelAnimationFrame(frame)
    clearTimeout(timer)
    frame = undefined
    pending = false
    const start = performance.now()
    lastFlush = start
    for (const id of dirty) {
      dirty.delete(id)
      draw(id)
      if (dirty.size > 0 && performance.now() - start > FRAME_BUDGET_MS) {
        schedule(true)
        break
      }
    }
    empty.hidden = rows.size > 0
    document.title = `hookguard inspect (${records.size})`
    if (dirty.size === 0) for (const then of waiting.splice(0)) then()
  }

  /** The next frame draws; `soon`: without waiting for the interval (a draw cut short by its budget). */
  function schedule(soon = false): void {
    if (pending) return
    pending = true
    // Changes arriving one after another are drawn FRAME_INTERVAL_MS apart: a burst costs a few frames a second.
    const wait = soon ? 0 : Math.max(0, lastFlush + FRAME_INTERVAL_MS - performance.now())
    timer = setTimeout(() => {
      frame = requestAnimationFrame(flush)
      timer = setTimeout(flush, FALLBACK_MS)
    }, wait)
  }

  function changed(ids: Iterable<number>): void {
    for (const id of ids) dirty.add(id)
    schedule()
  }

  return {
    filters: h('nav', { class: 'filters' }, verdict, code, h('label', {}, disagreement, ' disagreements only')),
    element,
    changed,
    select(id) {
      const before = selected
      selected = id
      if (before !== undefined) dirty.add(before)
      if (id !== undefined) dirty.add(id)
      schedule()
    },
    whenDrawn(then) {
      waiting.push(then)
      schedule()
    },
  }
}
