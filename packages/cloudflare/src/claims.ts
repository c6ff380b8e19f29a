/**
 * The claim protocol of a dedupe store, over a synchronous table of rows: the memory store's and
 * the Redis store's rules, written once for the Durable Object. Every function here runs without
 * an `await`, so inside the object (which delivers the next call only when this one awaits I/O) a
 * claim is decided and written in one step: two copies of a delivery can never both be granted it.
 */

/** One key's row: the holder's token while its handler runs, `null` once done; when the row lapses. */
export interface ClaimRow {
  token: string | null
  /** Milliseconds since the epoch. A row at or past it counts as absent. */
  expiresAt: number
}

/** Where the rows live: the object's SQLite table, or a `Map` in the unit tests. */
export interface ClaimRows {
  get(key: string): ClaimRow | undefined
  put(key: string, row: ClaimRow): void
  delete(key: string): void
}

/**
 * What a claim found, as it crosses from the object to the Worker: plain data, so that it survives
 * structured cloning, and a settle call made after the object restarted still finds its row by the
 * token.
 */
export type ClaimAnswer = { state: 'claimed'; token: string } | { state: 'processing'; retryAfterMs: number } | { state: 'done' }

/** Claims `key` for `ttlMs` under `token`, unless a live row holds it: that row's holder is still handling it, or it is done. */
export function claimRow(rows: ClaimRows, key: string, ttlMs: number, now: number, token: string): ClaimAnswer {
  const row = rows.get(key)
  if (row !== undefined && now < row.expiresAt) {
    return row.token === null ? { state: 'done' } : { state: 'processing', retryAfterMs: row.expiresAt - now }
  }
  // Absent, or lapsed: a holder that died loses its claim once its TTL has run out.
  rows.put(key, { token, expiresAt: now + ttlMs })
  return { state: 'claimed', token }
}

/**
 * Marks `key` done for `ttlMs`, whoever holds it now: the delivery was handled, even if this claim
 * lapsed while the handler ran and a retry claimed it since. That retry's release then finds the
 * row done, not its own, and leaves it.
 */
export function completeRow(rows: ClaimRows, key: string, ttlMs: number, now: number): number {
  const expiresAt = now + ttlMs
  rows.put(key, { token: null, expiresAt })
  return expiresAt
}

/** Forgets `key` only while `token` holds it, so that a late release never frees a newer claim or a done row. */
export function releaseRow(rows: ClaimRows, key: string, token: string): void {
  if (rows.get(key)?.token === token) rows.delete(key)
}
