/** What the Durable Object dedupe Worker (`dedupe-worker.ts`) and its driver (`dedupe-workerd.ts`) share. */

export const DEDUPE_SECRET = 'whsec-durable-object-dedupe-31c8'
/** The Hono app's store spreads its keys over this many objects; the fetch handler's, over the default 16. */
export const HONO_SHARDS = 4
export const DEFAULT_SHARDS = 16
/** The mode-`none` route's store: its objects and the rows each keeps at most (`maxRows`). */
export const OPEN_SHARDS = 2
export const OPEN_MAX_ROWS = 50

/** A delivery's payload, which tells the handler what to do: fail its first `fail` runs (answering 500, or throwing), each run taking `ms`. */
export interface TestPayload {
  id: string
  fail: number
  throws: boolean
  ms: number
}

/** Per delivery id: how often its handler started, completed (answered 2xx) and failed. */
export type LedgerCounts = Record<string, { started: number; completed: number; failed: number }>
