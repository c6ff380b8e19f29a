/**
 * The inspector's page. Plain DOM, no framework, one module per thing a reader looks for: the
 * timeline (list.ts, over records.ts), a delivery's detail (detail.ts, delivery-actions.ts), a
 * diff (diff-view.ts), the composer (composer.ts), the stream (stream.ts) and the API (api.ts).
 * Every value that came from a request is written with `textContent` (or as an attribute value),
 * never as markup, and the server's CSP allows no inline script: a payload holding `<script>` or
 * `<img onerror>` is shown as the text it is.
 */
import type { PageState } from '../ui-context.ts'
import { api, NoToken, showNoToken, takeToken } from './api.ts'
import { createComposer } from './composer.ts'
import { showDetail } from './detail.ts'
import { showDiff } from './diff-view.ts'
import { h } from './dom.ts'
import { createTimeline, type Timeline } from './list.ts'
import { Records } from './records.ts'
import { follow, type StreamEvent } from './stream.ts'

const app = document.getElementById('app') as HTMLElement

async function start(): Promise<void> {
  if (takeToken() === null) {
    showNoToken()
    return
  }
  // A permalink of the older form (`?id=7`).
  const id = new URL(location.href).searchParams.get('id')
  if (id !== null && location.hash === '') location.hash = `#/d/${id}`

  const state = await api<PageState>('/api/state')
  let timeline: Timeline | undefined
  const records = new Records((ids) => timeline?.changed(ids))
  timeline = createTimeline(records)
  const composer = createComposer(state)
  const pane = h('section', { class: 'detail', 'data-testid': 'detail' }, h('p', { class: 'muted' }, 'Select a delivery.'))
  const status = h('span', { class: 'status', 'data-testid': 'status' }, 'connecting…')
  const where = state.forwardTo === null ? `answering as hookguard (${state.mode})` : `in front of ${state.forwardTo} (${state.mode})`
  app.replaceChildren(
    h('header', {}, h('h1', {}, 'hookguard inspect'), h('span', { class: 'where' }, `${state.receive} · ${where}`), status),
    timeline.filters,
    h('main', {}, h('div', { class: 'left' }, timeline.element, composer.element), pane),
  )

  const route = (): void => {
    if (/^#token=/.test(location.hash)) {
      // The printed address pasted into an open page: its token replaces the one kept.
      takeToken()
      location.reload()
      return
    }
    const diff = /^#\/diff\/(\d+)\/(\d+)$/.exec(location.hash)
    if (diff) {
      void showDiff(pane, Number(diff[1]), Number(diff[2]))
      return
    }
    const one = /^#\/d\/(\d+)$/.exec(location.hash)
    if (one) {
      timeline?.select(Number(one[1]))
      void showDetail(pane, Number(one[1]), composer.edit)
    }
  }
  window.addEventListener('hashchange', route)
  route()

  const live = (on: boolean): void => {
    status.textContent = on ? 'live' : 'disconnected: retrying…'
    status.className = on ? 'status live' : 'status down'
  }
  const apply = (event: StreamEvent): void => {
    if (event.type === 'ready') {
      records.replace(event.data.records)
      // Live once the list shows what the server keeps, not before.
      timeline?.whenDrawn(() => live(true))
    } else if (event.type === 'record') records.put(event.data)
    else if (event.type === 'deleted') records.delete(event.data.ids)
    else records.replace([])
  }
  await follow(apply, () => live(false))
}

void start().catch((error: unknown) => {
  if (error instanceof NoToken) return
  app.replaceChildren(h('p', { class: 'alert' }, `The inspector could not be reached: ${(error as Error).message}`))
})
