/** Longest key accepted, in UTF-16 code units: the core's keys are under 100; a longer one is a `dedupe.key` gone wrong. */
export const MAX_KEY_LENGTH = 2048

export function checkKey(key: string): void {
  if (typeof key !== 'string' || key === '' || key.length > MAX_KEY_LENGTH) {
    throw new TypeError(`@hookguard/cloudflare: a dedupe key must be a string of 1 to ${MAX_KEY_LENGTH} characters`)
  }
}

export function checkTtl(ttlMs: number): void {
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) {
    throw new TypeError('@hookguard/cloudflare: a dedupe TTL must be a whole number of milliseconds, 1 or more')
  }
}

/**
 * Rows one object keeps at most, by default: its live claims and done marks together. The default
 * 16 objects keep 1.6 million deliveries, a few hundred megabytes of SQLite in all; a day's
 * deliveries to one receiver are usually far fewer. In mode `none` anyone can add rows, and this
 * is what bounds them.
 */
export const DEFAULT_MAX_ROWS = 100_000

export function checkMaxRows(maxRows: number): void {
  if (!Number.isSafeInteger(maxRows) || maxRows < 1) {
    throw new TypeError('@hookguard/cloudflare: maxRows must be a whole number, 1 or more')
  }
}
