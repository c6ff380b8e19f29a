import { DurableObject } from 'cloudflare:workers'
import { checkKey, checkMaxRows, checkTtl, DEFAULT_MAX_ROWS } from './checks.ts'
import { type ClaimAnswer, type ClaimRow, type ClaimRows, claimRow, completeRow, releaseRow } from './claims.ts'

const TABLE = 'hookguard_dedupe'
/** Rows one alarm deletes at most; a larger backlog is taken in further alarms, one after another. */
const SWEEP_BATCH = 1000

const NO_SQLITE =
  '@hookguard/cloudflare: HookguardDedupe keeps its claims in SQLite storage; declare the class under "new_sqlite_classes" in the migrations of wrangler.jsonc'

interface SqlRow extends Record<string, string | number | null> {
  token: string | null
  expires_at: number
}

/**
 * The Durable Object that holds the claims of `durableObjectDedupeStore`. Bind it in your
 * `wrangler.jsonc` (`durable_objects.bindings`, and `new_sqlite_classes` in `migrations`: it keeps
 * its rows in the object's SQLite storage) and export it under that name from your Worker's main
 * module: `export { HookguardDedupe } from '@hookguard/cloudflare'`. You never call it yourself;
 * the store does, over Workers RPC.
 *
 * A claim is read and written in one synchronous step of SQL, with no `await` in between, so the
 * object (which runs one call at a time until that call awaits I/O) never grants one key twice.
 * Each row keeps its expiry; an expired row counts as absent at once, and an alarm deletes the
 * expired rows, so the storage holds no more than the deliveries of the last `ttl`, and never
 * more than the store's `maxRows`: a claim for a new key past it is refused (the receiver answers
 * 503), never made by forgetting another delivery's claim or done mark.
 */
export class HookguardDedupe extends DurableObject {
  /**
   * Expired rows are deleted by alarms set at most once per this many milliseconds (the next
   * expiry, rounded up to a multiple of it), so that a busy object is not woken for every row.
   * Default 60 000. A subclass may set its own.
   */
  static sweepEvery = 60_000

  #rows: ClaimRows | undefined
  /** Rows in the table: counted once per start of the object, then kept as calls add and delete them. */
  #count: number | undefined
  /** The alarm this object has set: a time, `null` for none, `undefined` until read from storage. */
  #alarmAt: number | null | undefined

  /**
   * Claims `key` for `ttlMs`, unless a live claim or a done mark holds it. A key with no row is
   * refused (the call throws) while the table holds `maxRows` rows that have not expired.
   */
  async claim(key: string, ttlMs: number, maxRows: number = DEFAULT_MAX_ROWS): Promise<ClaimAnswer> {
    checkKey(key)
    checkTtl(ttlMs)
    checkMaxRows(maxRows)
    const now = Date.now()
    const rows = this.#table()
    const added = rows.get(key) === undefined
    if (added && this.#full(now, maxRows)) {
      // Refused rather than made room for: dropping the oldest done mark would let a late copy of
      // that delivery run again, and in mode `none` a stranger's flood would choose when.
      throw new Error(`@hookguard/cloudflare: the dedupe object holds ${maxRows} deliveries (maxRows); new claims wait until some expire`)
    }
    const found = claimRow(rows, key, ttlMs, now, crypto.randomUUID())
    if (found.state === 'claimed') {
      if (added) this.#added(1)
      await this.#sweepAfter(now + ttlMs)
    }
    return found
  }

  /** Marks `key` done for `ttlMs`, even over a newer claim: its delivery was handled. */
  async complete(key: string, ttlMs: number): Promise<void> {
    checkKey(key)
    checkTtl(ttlMs)
    const rows = this.#table()
    // A done mark is written even past maxRows: the delivery was handled, and forgetting it could run it again.
    if (rows.get(key) === undefined) this.#added(1)
    await this.#sweepAfter(completeRow(rows, key, ttlMs, Date.now()))
  }

  /** Forgets `key` if `token`'s claim still holds it, so that a retry runs the handler. */
  async release(key: string, token: string): Promise<void> {
    checkKey(key)
    if (typeof token !== 'string') throw new TypeError('@hookguard/cloudflare: a claim token must be a string')
    const rows = this.#table()
    const held = rows.get(key)?.token === token
    releaseRow(rows, key, token)
    if (held) this.#added(-1)
  }

  /** Deletes expired rows, then sets the alarm for the next expiry, if any row is left. */
  override async alarm(): Promise<void> {
    const sql = this.#sql()
    this.#table()
    const now = Date.now()
    const deleted = this.#deleteExpired(now, SWEEP_BATCH)
    const next = sql.exec<{ next: number | null }>(`SELECT MIN(expires_at) AS next FROM ${TABLE}`).one().next
    // The alarm that is running is deleted when it returns, unless another is set meanwhile.
    this.#alarmAt = null
    if (next !== null) await this.#setAlarm(deleted >= SWEEP_BATCH ? now : this.#rounded(Math.max(next, now)))
  }

  /** The object's SQL API; an object on the older key-value storage has none (its getter throws). */
  #sql() {
    try {
      const { sql } = this.ctx.storage
      if (sql !== undefined) return sql
    } catch (cause) {
      throw new Error(NO_SQLITE, { cause })
    }
    throw new Error(NO_SQLITE)
  }

  /** The table, created on the first call of each start of the object (a no-op after the first ever). */
  #table(): ClaimRows {
    if (this.#rows !== undefined) return this.#rows
    const sql = this.#sql()
    sql.exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (key TEXT PRIMARY KEY, token TEXT, expires_at INTEGER NOT NULL)`)
    sql.exec(`CREATE INDEX IF NOT EXISTS ${TABLE}_expires_at ON ${TABLE} (expires_at)`)
    this.#rows = {
      get(key) {
        const row = sql.exec<SqlRow>(`SELECT token, expires_at FROM ${TABLE} WHERE key = ?`, key).toArray()[0]
        return row === undefined ? undefined : ({ token: row.token, expiresAt: row.expires_at } satisfies ClaimRow)
      },
      put(key, { token, expiresAt }) {
        sql.exec(
          `INSERT INTO ${TABLE} (key, token, expires_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at`,
          key,
          token,
          expiresAt,
        )
      },
      delete(key) {
        sql.exec(`DELETE FROM ${TABLE} WHERE key = ?`, key)
      },
    }
    return this.#rows
  }

  /**
   * Whether the table holds `maxRows` rows that have not expired. Expired rows count as absent, so
   * they are deleted first, at once, rather than at the next alarm. Cheap when nothing has expired:
   * one range of the expiry index, and the count kept in memory.
   */
  #full(now: number, maxRows: number): boolean {
    if (this.#rowCount() < maxRows) return false
    this.#deleteExpired(now, maxRows)
    return this.#rowCount() >= maxRows
  }

  /** Deletes up to `limit` expired rows, the earliest first; how many it deleted. */
  #deleteExpired(now: number, limit: number): number {
    const sql = this.#sql()
    const expired = `SELECT key FROM ${TABLE} WHERE expires_at <= ? ORDER BY expires_at LIMIT ${limit}`
    const count = sql.exec<{ rows: number }>(`SELECT COUNT(*) AS rows FROM (${expired})`, now).one().rows
    if (count === 0) return 0
    sql.exec(`DELETE FROM ${TABLE} WHERE key IN (${expired})`, now)
    if (this.#count !== undefined) this.#count -= count
    return count
  }

  #rowCount(): number {
    this.#count ??= this.#sql().exec<{ rows: number }>(`SELECT COUNT(*) AS rows FROM ${TABLE}`).one().rows
    return this.#count
  }

  #added(rows: number): void {
    if (this.#count !== undefined) this.#count += rows
  }

  /** Makes sure an alarm will delete a row that expires at `expiresAt`: one is set by then, or one is set for it. */
  async #sweepAfter(expiresAt: number): Promise<void> {
    const at = this.#rounded(expiresAt)
    if (this.#alarmAt === undefined) this.#alarmAt = await this.ctx.storage.getAlarm()
    if (this.#alarmAt !== null && this.#alarmAt <= at) return
    await this.#setAlarm(at)
  }

  async #setAlarm(at: number): Promise<void> {
    this.#alarmAt = at
    await this.ctx.storage.setAlarm(at)
  }

  #rounded(time: number): number {
    const every = (this.constructor as typeof HookguardDedupe).sweepEvery
    return Math.ceil(time / every) * every
  }
}
