import { checkPrefix, checkTimeout, commandSender, DEFAULT_COMMAND_TIMEOUT, type RedisClient, uniqueToken } from './command.ts'

export const DEFAULT_TOKEN_KEY = 'hookguard:token'
/** Longer than a token request takes; short enough that a crashed holder delays the others little. */
export const DEFAULT_LOCK_TTL = 10_000
/** A token is kept in Redis at least this long, whatever the clocks say: the client checks expiry itself. */
const MIN_KEEP_MS = 1000

/** Deletes the lock only while this holder has it. */
const UNLOCK = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`
/** Deletes the token only if it is still the one the service refused; anything unreadable stays. */
const INVALIDATE = `local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local ok, t = pcall(cjson.decode, v)
if ok and type(t) == 'table' and t.accessToken == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`

// The token store's types are declared here, not imported from @hookguard/client: the client is an
// optional peer, and a dedupe-only app without it must still compile (TS2307 otherwise, or with
// skipLibCheck a store typed `any`). They are the client's own shapes, so the store fits its
// `tokenStore` option structurally; the package's type tests pin that.

/** An access token as `@hookguard/client` keeps it: its `StoredToken`. */
export interface StoredToken {
  accessToken: string
  /** When the service says the token expires: milliseconds since the epoch. */
  expiresAt: number
  /** When the token was requested (ms). */
  issuedAt?: number
}

/** Gives the refresh lock back. */
export type ReleaseLock = () => void | Promise<void>

/** What `redisTokenStore` returns: a `TokenStore` of `@hookguard/client`, with `lock` and `invalidate`. */
export interface RedisTokenStore {
  get(): Promise<StoredToken | undefined>
  set(token: StoredToken): Promise<void>
  /** Takes the refresh lock if no one holds it: a function that releases it, or `undefined`. */
  lock(): Promise<ReleaseLock | undefined>
  /** Forgets the stored token, but only if it is still `accessToken`. */
  invalidate(accessToken: string): Promise<void>
}

export interface RedisTokenStoreOptions {
  /** Where the token is kept (as JSON); the lock is `key + ':lock'`. Default `hookguard:token`. */
  key?: string
  /** Milliseconds after which a refresh lock expires if its holder never gives it back. Default 10 000. */
  lockTtl?: number
  /** Milliseconds to wait for Redis before a command fails. Default 1000. */
  commandTimeout?: number
}

/**
 * A `TokenStore` for `@hookguard/client` in Redis: every instance that uses it shares one
 * access token. When it falls due, one instance takes the refresh lock (`SET key:lock NX PX`)
 * and fetches the next token while the others wait for it; a crashed holder's lock expires after
 * `lockTtl`. A token the service refuses with a 401 is deleted for everyone, unless another
 * instance has already replaced it.
 *
 * Pass your own connected client: `createClient()` from `redis` (node-redis 4 to 6) or
 * `new Redis()` from `ioredis` (5 or 6).
 *
 * @example
 * const client = createClient({
 *   baseUrl: 'https://api.example.com',
 *   appId: process.env.APP_ID!,
 *   appSecret: process.env.APP_SECRET!,
 *   tokenStore: redisTokenStore(redis, { key: 'service:token' }),
 * })
 */
export function redisTokenStore(client: RedisClient, options: RedisTokenStoreOptions = {}): RedisTokenStore {
  const { key = DEFAULT_TOKEN_KEY, lockTtl = DEFAULT_LOCK_TTL, commandTimeout = DEFAULT_COMMAND_TIMEOUT } = options
  checkPrefix(key, 'key', 'redisTokenStore')
  checkTimeout(commandTimeout, 'redisTokenStore')
  if (!Number.isSafeInteger(lockTtl) || lockTtl < 1) {
    throw new TypeError('@hookguard/redis: redisTokenStore lockTtl must be a whole number of milliseconds, 1 or more')
  }
  const send = commandSender(client, { prefix: key, timeout: commandTimeout, label: 'redisTokenStore' })
  const lockKey = `${key}:lock`

  return {
    async get() {
      const text = await send(['GET', key])
      if (typeof text !== 'string') return undefined
      try {
        // The client checks the shape; anything else counts as no token.
        return JSON.parse(text) as StoredToken
      } catch {
        return undefined
      }
    },
    async set(token) {
      // Expires with the token, so a dead deployment leaves nothing behind.
      const keep = Math.max(MIN_KEEP_MS, Math.ceil(token.expiresAt - Date.now()))
      await send(['SET', key, JSON.stringify(token), 'PX', String(keep)])
    },
    async lock() {
      const holder = uniqueToken()
      const set = await send(['SET', lockKey, holder, 'NX', 'PX', String(lockTtl)], ['EVAL', UNLOCK, '1', lockKey, holder])
      // A refused SET that finds its own holder had run once already and lost its answer, and the
      // client sent it again on reconnecting (ioredis does by default): the lock is this one's.
      if (set !== 'OK' && (await send(['GET', lockKey])) !== holder) return undefined
      return async () => {
        await send(['EVAL', UNLOCK, '1', lockKey, holder])
      }
    },
    async invalidate(accessToken) {
      await send(['EVAL', INVALIDATE, '1', key, accessToken])
    },
  }
}
