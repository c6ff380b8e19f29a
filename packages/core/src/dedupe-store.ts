/** Default bound of the in-memory store: enough for a busy hour of one instance, a few MB at most. */
export const DEFAULT_DEDUPE_MAX_ENTRIES = 10_000

/** What a claim found: this caller now holds it, or another delivery of the same fingerprint does or did. */
export type ClaimResult = { state: 'claimed'; claim: Claim } | { state: 'processing'; retryAfterMs: number } | { state: 'done' }

/** A fingerprint this caller holds while its handler runs. */
export interface Claim {
  /**
   * The handler succeeded: remember the fingerprint as done for `ttlMs` (default: the claim's
   * own TTL), so a later duplicate is answered without running the handler; even when this claim
   * expired and another holds the key now, since the delivery was handled.
   */
  complete(ttlMs?: number): Promise<void>
  /** The handler failed: forget the claim (only if it is still this claim), so a retry runs. */
  release(): Promise<void>
}

/**
 * Where delivery fingerprints are claimed. One store shared by every instance (Redis, see
 * `@hookguard/redis`) processes each delivery once across all of them; a store that cannot be
 * reached rejects, and the receiver answers 503 `store_unavailable` rather than risk a second run.
 */
export interface DedupeStore {
  /** Atomically claims `key` for `ttlMs` (a crashed holder's claim expires after it). */
  claim(key: string, ttlMs: number): Promise<ClaimResult>
}

export interface MemoryDedupeStoreOptions {
  /**
   * Fingerprints kept at most; when full, the one written longest ago goes first, unless its
   * handler is still running: a store full of those refuses new claims (503) until one settles.
   * Default 10 000.
   */
  maxEntries?: number
  /** Milliseconds since the epoch; default `Date.now`. For tests. */
  clock?: () => number
}

interface Entry {
  /** `undefined` once done: a done fingerprint belongs to no claim. */
  token: string | undefined
  expiresAt: number
}

/**
 * A bounded in-memory `DedupeStore`: an LRU of fingerprints with expiry. It dedupes within one
 * process only; behind a load balancer, or with several workers, use a shared store such as
 * `redisDedupeStore` from `@hookguard/redis`. It runs on every runtime and starts no timer:
 * expired entries are dropped as they are met.
 *
 * @example
 * const store = memoryDedupeStore({ maxEntries: 50_000 })
 * const found = await store.claim('9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', 60_000)
 * if (found.state === 'claimed') await found.claim.complete()
 */
export function memoryDedupeStore(options: MemoryDedupeStoreOptions = {}): DedupeStore {
  const { maxEntries = DEFAULT_DEDUPE_MAX_ENTRIES, clock = Date.now } = options
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
    throw new TypeError('@hookguard/core: memoryDedupeStore maxEntries must be a whole number, 1 or more')
  }
  if (typeof clock !== 'function') throw new TypeError('@hookguard/core: memoryDedupeStore clock must be a function')
  // A Map iterates in insertion order: re-inserting on every write keeps the oldest first.
  const entries = new Map<string, Entry>()
  let counter = 0

  const write = (key: string, entry: Entry): void => {
    entries.delete(key)
    makeRoom(clock())
    entries.set(key, entry)
  }
  /**
   * Makes room for one more entry, the oldest first, but never by dropping a claim whose handler
   * is still running: its duplicate would then run beside it (a flood of other deliveries, in mode
   * `none` anyone's, would be enough). Whether there is room now.
   */
  const makeRoom = (now: number): boolean => {
    if (entries.size < maxEntries) return true
    for (const [key, entry] of entries) {
      if (entry.token === undefined || entry.expiresAt <= now) {
        entries.delete(key)
        return true
      }
    }
    return false
  }
  /** Whether `key` is still held by `token`, so that a late call never touches a newer claim. */
  const heldBy = (key: string, token: string): boolean => entries.get(key)?.token === token

  return {
    async claim(key, ttlMs) {
      checkTtl(ttlMs)
      const now = clock()
      const entry = entries.get(key)
      if (entry !== undefined && now < entry.expiresAt) {
        return entry.token === undefined ? { state: 'done' } : { state: 'processing', retryAfterMs: entry.expiresAt - now }
      }
      entries.delete(key)
      if (!makeRoom(now)) {
        // The receiver answers 503 store_unavailable: the service retries once handlers finish.
        throw new Error(`the in-memory dedupe store holds ${maxEntries} deliveries being handled, its maxEntries`)
      }
      // Unique within the store, which is all a token has to be here.
      // Stryker disable next-line UpdateOperator: equivalent — counting down, the tokens are as unique
      const token = String(++counter)
      entries.set(key, { token, expiresAt: now + ttlMs })
      return {
        state: 'claimed',
        claim: {
          async complete(doneTtlMs = ttlMs) {
            checkTtl(doneTtlMs)
            // The delivery was handled, even if its claim expired meanwhile and a retry holds the
            // key now: that retry's release then finds the key done, not its own, and leaves it.
            write(key, { token: undefined, expiresAt: clock() + doneTtlMs })
          },
          async release() {
            if (heldBy(key, token)) entries.delete(key)
          },
        },
      }
    },
  }
}

function checkTtl(ttlMs: number): void {
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1)
    throw new TypeError('@hookguard/core: a dedupe TTL must be a whole number of milliseconds, 1 or more')
}
