import type { Claim, ClaimResult, DedupeStore } from '@hookguard/core'
import { checkPrefix, checkTimeout, commandSender, DEFAULT_COMMAND_TIMEOUT, type RedisClient, type Send, uniqueToken } from './command.ts'

export const DEFAULT_DEDUPE_PREFIX = 'hookguard:dedupe:'

const PROCESSING = 'processing:'
const DONE = 'done'
/** What a claim that found its key taken answers when Redis cannot say how long the holder has left. */
const UNKNOWN_RETRY_MS = 1000
/** Tries at a claim whose key vanished between the SET and the read (it expired or was released). */
const CLAIM_ATTEMPTS = 3

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
        if ((await send(['SET', key, value, 'NX', 'PX', String(ttlMs)], ['EVAL', RELEASE, '1', key, value])) === 'OK') {
          return { state: 'claimed', claim: redisClaim(send, key, value, ttlMs) }
        }
        const found = await taken(send, key)
        if (found !== undefined || attempt === CLAIM_ATTEMPTS) return found ?? { state: 'processing', retryAfterMs: UNKNOWN_RETRY_MS }
      }
    },
  }
}

/** What holds a taken key, or `undefined` if it has gone meanwhile. */
async function taken(send: Send, key: string): Promise<Exclude<ClaimResult, { state: 'claimed' }> | undefined> {
  const reply = await send(['EVAL', READ, '1', key])
  const [value, pttl] = Array.isArray(reply) ? reply : []
  if (value === null || value === undefined) return undefined
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
      await send(['EVAL', COMPLETE, '1', key, DONE, String(doneTtlMs)])
    },
    async release() {
      await send(['EVAL', RELEASE, '1', key, value])
    },
  }
}
