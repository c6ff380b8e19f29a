import type { Context } from 'hono'
import type { Preset } from './actions.ts'
import type { InspectorSettings } from './options.ts'
import type { InspectedRecord } from './record.ts'
import type { Ring } from './ring.ts'
import type { SourceMark } from './source-mark.ts'
import type { RecordSummary } from './view.ts'

// What the page's routes share: the running inspector they serve, the events they publish, and
// the shapes the page reads. Below every route file, so that none of them imports another.

export interface UiContext {
  settings: InspectorSettings
  ring: Ring
  accessToken: string
  /** This run's mark on the page's own requests, so that their rows say so. */
  mark: SourceMark
  /** The receiving address, for actions and exports. */
  receiveUrl(): URL
  /** The host names (with the port) the page answers to. */
  allowedHosts(): Set<string>
  subscribe(listener: (event: UiEvent) => void): () => void
  rememberPreset(key: string, preset: { name: string; expected: string }): void
  /** Tells every open page. */
  publish(event: UiEvent): void
}

/** What changed in the ring: a record kept, records dropped (evicted by the bounds, or deleted), all dropped. */
export type UiEvent = { type: 'record'; summary: RecordSummary } | { type: 'deleted'; ids: number[] } | { type: 'cleared' }

/**
 * The page's stream, one server-sent event per entry: `ready` first, with every record the ring
 * keeps (taken in the same turn as the subscription, so that nothing falls between the two), then
 * each change. A page that reads too slowly gets `ready` again instead of the changes it missed.
 */
export interface StreamData {
  ready: { records: RecordSummary[] }
  record: RecordSummary
  deleted: { ids: number[] }
  cleared: Record<string, never>
}

/** What `/api/state` answers: the page's settings, and the records kept, oldest first. */
export interface PageState {
  mode: InspectorSettings['auth']['mode']
  forwardTo: string | null
  receive: string
  maxBodySize: number
  presets: Preset[]
  canResend: boolean
  records: RecordSummary[]
}

/** The record a route's `:id` names, if the ring still keeps it. */
export function recordOf(c: Context, ring: Ring): InspectedRecord | undefined {
  const id = Number(c.req.param('id'))
  return Number.isInteger(id) ? ring.get(id) : undefined
}

export function notFound(c: Context) {
  return c.json({ error: 'not_found' }, 404)
}
