/**
 * The inspector's page. Plain DOM, no framework, one module per thing a reader looks for: the
 * timeline (list.ts, over records.ts), a delivery's detail (detail.ts, delivery-actions.ts), a
 * diff (diff-view.ts), the composer (composer.ts), the stream (stream.ts) and the API (api.ts).
 * Every value that came from a request is written with `textContent` (or as an attribute value),
 * never as markup, and the server's CSP allows no inline script: a payload holding `<script>` or
 * `<img onerror>` is shown as the text it is.
 */
import type { PageState } from '../ui-context.ts'
import type { RecordSummary } from '../view.ts'
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

  // Each opening of the pane is numbered: one whose fetch answers after a later one's shows nothing.
  let opened = 0
  const opening = (): (() => boolean) => {
    const mine = ++opened
    return () => mine === opened
  }
  // Until the reader chooses what the pane shows (a row, a permalink, a diff), the page opens the
  // newest refusal by itself, so that the first screen shows a cause; a choice is never taken back.
  let chosen = false
  let auto: number | undefined
  let picking = false
  const pickLater = (): void => {
    if (chosen || picking) return
    picking = true
    // Once the rows are drawn: at most once a frame, however many records a burst brings.
    timeline?.whenDrawn(() => {
      picking = false
      if (chosen) return
      const id = records.firstToOpen()
      if (id === auto) return
      auto = id
      timeline?.select(id)
      if (id === undefined) pane.replaceChildren(h('p', { class: 'muted' }, 'Select a delivery.'))
      else void showDetail(pane, id, composer.edit, opening())
    })
  }

  const route = (): void => {
    if (/^#token=/.test(location.hash)) {
      // The printed address pasted into an open page: its token replaces the one kept.
      takeToken()
      location.reload()
      return
    }
    const diff = /^#\/diff\/(\d+)\/(\d+)$/.exec(location.hash)
    if (diff) {
      chosen = true
      void showDiff(pane, Number(diff[1]), Number(diff[2]), opening())
      return
    }
    const one = /^#\/d\/(\d+)$/.exec(location.hash)
    if (one) {
      chosen = true
      timeline?.select(Number(one[1]))
      void showDetail(pane, Number(one[1]), composer.edit, opening())
    }
  }
  window.addEventListener('hashchange', route)
  route()

  const live = (on: boolean): void => {
    status.textContent = on ? 'live' : 'disconnected: retrying…'
    status.className = on ? 'status live' : 'status down'
  }
  // The composer sends to the path deliveries come to; a token request's path is not one.
  let newestPath = 0
  const seen = (r: RecordSummary): void => {
    if (r.kind !== 'delivery' || r.id <= newestPath) return
    newestPath = r.id
    composer.seen(r.path)
  }
  const apply = (event: StreamEvent): void => {
    if (event.type === 'ready') {
      records.replace(event.data.records)
      for (const r of event.data.records) seen(r)
      // Live once the list shows what the server keeps, not before.
      timeline?.whenDrawn(() => live(true))
    } else if (event.type === 'record') {
      records.put(event.data)
      seen(event.data)
    } else if (event.type === 'deleted') records.delete(event.data.ids)
    else records.replace([])
    pickLater()
  }
  await follow(apply, () => live(false))
}

void start().catch((error: unknown) => {
  if (error instanceof NoToken) return
  app.replaceChildren(h('p', { class: 'alert' }, `The inspector could not be reached: ${(error as Error).message}`))
})
