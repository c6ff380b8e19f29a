import type { Claim, ClaimResult, DedupeStore } from '@hookguard/core'
import {
  checkPrefix,
  checkTimeout,
  commandSender,
  DEFAULT_COMMAND_TIMEOUT,
  type RedisClient,
  RedisStoreError,
  type Send,
  uniqueToken,
} from './command.ts'

export const DEFAULT_DEDUPE_PREFIX = 'hookguard:dedupe:'

const PROCESSING = 'processing:'
const DONE = 'done'
/** What a claim that found its key taken answers when Redis cannot say how long the holder has left. */
const UNKNOWN_RETRY_MS = 1000
/** Tries at a claim whose key vanished between the SET and the read (it expired or was released). */
const CLAIM_ATTEMPTS = 3
/**
 * Settling (the `done` mark, a release) is sent again while Redis says it is passing through a
 * failover or a restart, for up to this many milliseconds after the first try (each try bounded by
 * `commandTimeout`, so about 4 s in all with the defaults, within the receiver's `claimTimeout`).
 * With Redis's default `cluster-require-full-coverage yes`, every master answers `CLUSTERDOWN`
 * between one master's failure and its replica's promotion: a `done` mark tried once in that moment
 * was lost even on the masters that stayed up, and a retry ran the handler again after
 * `processingTtl`. Both commands are safe to repeat: the mark is a plain `SET`, the release a
 * compare-and-delete of this claim's token. A claim is never sent again: its 503 only makes the
 * service retry later.
 */
export const SETTLE_WITHIN_MS = 3000
/** Milliseconds before the second try, doubled for each next up to {@link SETTLE_MAX_DELAY_MS}. */
const SETTLE_FIRST_DELAY_MS = 25
const SETTLE_MAX_DELAY_MS = 400
/**
 * Error replies that say the command may succeed shortly, on this node or its successor, and the
 * client errors of a connection lost under a failover.
 */
const PASSING = new Set([
  'CLUSTERDOWN',
  'TRYAGAIN',
  'LOADING',
  'MASTERDOWN',
  'READONLY',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
])

// The scripts run atomically in Redis: each compares the key with the claim's token and acts in
// the same step, so a claim that expired and was taken by another delivery is never released.

/** The value and time left of a taken key, read together. */
const READ = "return { redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]) }"
/**
 * Marks the key done: the delivery was handled, even if its claim expired while the handler ran
 * and a retry claimed it since (that retry's release then leaves it done). A plain SET: no token
 * to compare.
 */
const COMPLETE = "return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])"
/** Deletes the key only while this claim holds it. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`

export interface RedisDedupeStoreOptions {
  /** Put before each fingerprint to make the key. Default `hookguard:dedupe:`. */
  prefix?: string
  /** Milliseconds to wait for Redis before a command fails (and the delivery gets 503). Default 1000. */
  commandTimeout?: number
}

/**
 * A `DedupeStore` in Redis, shared by every instance that uses the same Redis and prefix: each
 * delivery is processed once across all of them. A claim is `SET key processing:<token> NX PX ttl`,
 * so a holder that crashes loses it when the TTL runs out; completing and releasing compare the
 * token first (one `EVAL` each). When Redis cannot be reached within `commandTimeout`, the store
 * rejects with a `RedisStoreError` and the receiver answers 503 `store_unavailable`; the service
 * retries later, and the delivery is still processed only once.
 *
 * Pass your own connected client: `createClient()` from `redis` (node-redis 4 to 6) or
 * `new Redis()` from `ioredis` (5 or 6), or their Redis Cluster clients (`createCluster()`,
 * `new Cluster()`). Add an `error` listener to it, as each library asks: without one, a lost
 * connection ends the process.
 *
 * @example
 * // redis: your connected client, e.g. await createClient({ url: process.env.REDIS_URL }).connect()
 * const store = redisDedupeStore(redis, { prefix: 'billing:dedupe:' })
 * // then: webhook({ auth, dedupe: { store } }) with any adapter
 */
export function redisDedupeStore(client: RedisClient, options: RedisDedupeStoreOptions = {}): DedupeStore {
  const { prefix = DEFAULT_DEDUPE_PREFIX, commandTimeout = DEFAULT_COMMAND_TIMEOUT } = options
  checkPrefix(prefix, 'prefix', 'redisDedupeStore')
  checkTimeout(commandTimeout, 'redisDedupeStore')
  const send = commandSender(client, { prefix, timeout: commandTimeout, label: 'redisDedupeStore' })

  return {
    async claim(fingerprint, ttlMs) {
      if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) {
        throw new TypeError('@hookguard/redis: a dedupe TTL must be a whole number of milliseconds, 1 or more')
      }
      const key = prefix + fingerprint
      for (let attempt = 1; ; attempt++) {
        const value = PROCESSING + uniqueToken()
        const set = await send(['SET', key, value, 'NX', 'PX', String(ttlMs)], ['EVAL', RELEASE, '1', key, value])
        const found = set === 'OK' ? 'own' : await taken(send, key, value)
        // `own` after a refused SET: it had run once already and its answer was lost, and the
        // client sent it again on reconnecting (ioredis does by default); the key is this claim's.
        if (found === 'own') return { state: 'claimed', claim: redisClaim(send, key, value, ttlMs) }
        if (found !== undefined || attempt === CLAIM_ATTEMPTS) return found ?? { state: 'processing', retryAfterMs: UNKNOWN_RETRY_MS }
      }
    },
  }
}

/** What holds a taken key: `own` if it is the claim `mine`, `undefined` if it has gone meanwhile. */
async function taken(send: Send, key: string, mine: string): Promise<Exclude<ClaimResult, { state: 'claimed' }> | 'own' | undefined> {
  const reply = await send(['EVAL', READ, '1', key])
  const [value, pttl] = Array.isArray(reply) ? reply : []
  if (value === null || value === undefined) return undefined
  if (String(value) === mine) return 'own'
  if (String(value) === DONE) return { state: 'done' }
  const left = Number(pttl)
  return { state: 'processing', retryAfterMs: Number.isFinite(left) && left > 0 ? left : UNKNOWN_RETRY_MS }
}

function redisClaim(send: Send, key: string, value: string, ttlMs: number): Claim {
  return {
    async complete(doneTtlMs = ttlMs) {
      if (!Number.isSafeInteger(doneTtlMs) || doneTtlMs < 1) {
        throw new TypeError('@hookguard/redis: a dedupe TTL must be a whole number of milliseconds, 1 or more')
      }
      await settling(send, ['EVAL', COMPLETE, '1', key, DONE, String(doneTtlMs)])
    },
    async release() {
      await settling(send, ['EVAL', RELEASE, '1', key, value])
    },
  }
}

/** Sends `args`, and again after a failure that may pass, with backoff, for {@link SETTLE_WITHIN_MS}. */
async function settling(send: Send, args: string[]): Promise<void> {
  const began = Date.now()
  for (let delay = SETTLE_FIRST_DELAY_MS; ; delay = Math.min(delay * 2, SETTLE_MAX_DELAY_MS)) {
    try {
      await send(args)
      return
    } catch (error) {
      if (!mayPass(error) || Date.now() - began + delay > SETTLE_WITHIN_MS) throw error
    }
    await new Promise((resolve) => setTimeout(resolve, delay))
  }
}

/**
 * Whether a failed command may succeed if sent again soon: no answer in time, no connection, a
 * reply or code of {@link PASSING}, or a client error that names no reason (ioredis's lost
 * connection) or names a closed connection (node-redis's). A reply that says the command itself
 * is wrong (`NOAUTH`, `WRONGTYPE`, `NOPERM`…) fails at once.
 */
function mayPass(error: unknown): boolean {
  if (!(error instanceof RedisStoreError)) return false
  if (error.failure !== 'error') return true
  const { reason } = error
  return reason === undefined || PASSING.has(reason) || /(Closed|Socket|Connection)\w*Error$/.test(reason)
}
