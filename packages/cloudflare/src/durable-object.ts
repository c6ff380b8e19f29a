import { DurableObject } from 'cloudflare:workers'
import { checkKey, checkTtl } from './checks.ts'
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
 * expired rows, so the storage holds no more than the deliveries of the last `ttl`.
 */
export class HookguardDedupe extends DurableObject {
  /**
   * Expired rows are deleted by alarms set at most once per this many milliseconds (the next
   * expiry, rounded up to a multiple of it), so that a busy object is not woken for every row.
   * Default 60 000. A subclass may set its own.
   */
  static sweepEvery = 60_000

  #rows: ClaimRows | undefined
  /** The alarm this object has set: a time, `null` for none, `undefined` until read from storage. */
  #alarmAt: number | null | undefined

  /** Claims `key` for `ttlMs`, unless a live claim or a done mark holds it. */
  async claim(key: string, ttlMs: number): Promise<ClaimAnswer> {
    checkKey(key)
    checkTtl(ttlMs)
    const now = Date.now()
    const found = claimRow(this.#table(), key, ttlMs, now, crypto.randomUUID())
    if (found.state === 'claimed') await this.#sweepAfter(now + ttlMs)
    return found
  }

  /** Marks `key` done for `ttlMs`, even over a newer claim: its delivery was handled. */
  async complete(key: string, ttlMs: number): Promise<void> {
    checkKey(key)
    checkTtl(ttlMs)
    await this.#sweepAfter(completeRow(this.#table(), key, ttlMs, Date.now()))
  }

  /** Forgets `key` if `token`'s claim still holds it, so that a retry runs the handler. */
  async release(key: string, token: string): Promise<void> {
    checkKey(key)
    if (typeof token !== 'string') throw new TypeError('@hookguard/cloudflare: a claim token must be a string')
    releaseRow(this.#table(), key, token)
  }

  /** Deletes expired rows, then sets the alarm for the next expiry, if any row is left. */
  override async alarm(): Promise<void> {
    const sql = this.#sql()
    this.#table()
    const now = Date.now()
    const deleted = sql.exec(
      `DELETE FROM ${TABLE} WHERE key IN (SELECT key FROM ${TABLE} WHERE expires_at <= ? LIMIT ${SWEEP_BATCH})`,
      now,
    ).rowsWritten
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
