import type { Claim, DedupeStore } from '@hookguard/core'
import { checkKey, checkMaxRows, checkTtl, DEFAULT_MAX_ROWS } from './checks.ts'
import type { ClaimAnswer } from './claims.ts'
import { shardName, shardOf } from './shard.ts'

export const DEFAULT_SHARDS = 16
export const MAX_SHARDS = 1024
/**
 * Calls made again after an error the runtime marks `retryable` or `durableObjectReset` (the
 * object was reset under the call: a deploy, an eviction, a lost connection), as Cloudflare
 * advises; never after `overloaded`. Every call is safe to repeat: a repeated claim whose first
 * try took the key finds it held and answers `processing`, never a second run; complete and
 * release are idempotent. A claim gives up soon, since its 503 only makes the service retry
 * later. Settling tries for longer (about 2.5 s in all, within the receiver's `claimTimeout`): a
 * completion that never arrives leaves the claim to expire, and a later copy would run again.
 */
const CLAIM_RETRIES = 3
const SETTLE_RETRIES = 7
/** Milliseconds before the first retry, doubled for each next: the reset object is back within them. */
const RETRY_DELAY = 20

/**
 * The Durable Object namespace binding of `HookguardDedupe` (`env.DEDUPE`): the two methods the
 * store calls, typed loosely so that the binding's type from `@cloudflare/workers-types` or from
 * `wrangler types` (of any version, with or without the class named) is accepted as it is.
 */
export interface DedupeNamespace {
  idFromName(name: string): unknown
  get(id: never): unknown
}

export interface DurableObjectDedupeStoreOptions {
  /**
   * Objects the keys are spread over, each found by name (`idFromName`); a key's object follows
   * from a hash of the key. One object handles about a thousand calls a second, and each
   * delivery makes two (claim, then complete or release); more shards carry more. Keep the number
   * once deployed: a changed count moves most keys to other objects, which do not know them, so
   * a delivery retried across the change could run again. Default 16.
   */
  shards?: number
  /**
   * Rows one object keeps at most, its claims and done marks together (each kept `ttl`, a day by
   * default). Past it, a claim for a new delivery is refused and answered 503 `store_unavailable`
   * until rows expire; no claim or done mark is dropped to make room, since a copy of a delivery
   * whose done mark was dropped would run again. Size it above the deliveries one object sees in a
   * `ttl` (the receiver's, divided by `shards`). In mode `none`, where anyone can make rows, this
   * is what bounds them. Default 100 000.
   */
  maxRows?: number
}

/** Runs `call` on the key's object, again after a reset, up to `retries` more times. */
type OnObject = <T>(key: string, retries: number, call: (object: DedupeObject) => Promise<T>) => Promise<T>

/** The object's RPC methods, as the store calls them. */
interface DedupeObject {
  claim(key: string, ttlMs: number, maxRows: number): Promise<ClaimAnswer>
  complete(key: string, ttlMs: number): Promise<void>
  release(key: string, token: string): Promise<void>
}

/**
 * A `DedupeStore` in Durable Objects (`HookguardDedupe`), shared by every isolate of your Worker
 * in every location: each delivery is handled once, not once per isolate as with the default
 * in-memory store. A claim is one RPC to the key's object, which decides it atomically; completing
 * and releasing are one more. When the object cannot be reached or fails, the store rejects and
 * the receiver answers 503 `store_unavailable`: the service retries later, and the delivery is
 * still handled once.
 *
 * Pass the namespace binding itself; the store can be made once per isolate, with the app.
 *
 * @example
 * // env.DEDUPE: the durable_objects binding of HookguardDedupe in wrangler.jsonc
 * const store = durableObjectDedupeStore(env.DEDUPE)
 * // then: webhook({ auth, dedupe: { store } }) from @hookguard/hono, or from @hookguard/fetch
 */
export function durableObjectDedupeStore(namespace: DedupeNamespace, options: DurableObjectDedupeStoreOptions = {}): DedupeStore {
  const { shards = DEFAULT_SHARDS, maxRows = DEFAULT_MAX_ROWS } = options
  if (typeof namespace?.idFromName !== 'function' || typeof namespace.get !== 'function') {
    throw new TypeError(
      '@hookguard/cloudflare: durableObjectDedupeStore takes the Durable Object namespace binding of HookguardDedupe (env.DEDUPE), as wrangler.jsonc binds it',
    )
  }
  if (!Number.isSafeInteger(shards) || shards < 1 || shards > MAX_SHARDS) {
    throw new TypeError(`@hookguard/cloudflare: durableObjectDedupeStore shards must be a whole number from 1 to ${MAX_SHARDS}`)
  }
  checkMaxRows(maxRows)

  /** A fresh stub for each try, since a stub that saw its object reset stays broken. */
  const onObject: OnObject = async (key, retries, call) => {
    const name = shardName(shardOf(key, shards))
    for (let attempt = 0; ; attempt++) {
      const object = namespace.get(namespace.idFromName(name) as never) as DedupeObject
      try {
        return await call(object)
      } catch (error) {
        if (attempt === retries || !isRetryable(error)) throw error
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY * 2 ** attempt))
    }
  }

  return {
    async claim(key, ttlMs) {
      checkKey(key)
      checkTtl(ttlMs)
      const found = await onObject(key, CLAIM_RETRIES, (object) => object.claim(key, ttlMs, maxRows))
      if (found?.state !== 'claimed') return found
      const { token } = found
      if (typeof token !== 'string') throw new TypeError('@hookguard/cloudflare: the dedupe object granted a claim without a token')
      return { state: 'claimed', claim: objectClaim(key, token, ttlMs, onObject) }
    },
  }
}

function objectClaim(key: string, token: string, ttlMs: number, onObject: OnObject): Claim {
  return {
    async complete(doneTtlMs = ttlMs) {
      checkTtl(doneTtlMs)
      await onObject(key, SETTLE_RETRIES, (object) => object.complete(key, doneTtlMs))
    },
    async release() {
      await onObject(key, SETTLE_RETRIES, (object) => object.release(key, token))
    },
  }
}

/** What the Workers runtime says of a failed call to an object: worth another try, unless the object is overloaded. */
function isRetryable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const { retryable, durableObjectReset, overloaded } = error as { retryable?: unknown; durableObjectReset?: unknown; overloaded?: unknown }
  return (retryable === true || durableObjectReset === true) && overloaded !== true
}
