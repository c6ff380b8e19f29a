// @hookguard/redis: the stores that let several instances of a receiver, or of the API client,
// share their state through Redis, over your own node-redis or ioredis client.
export type { IoRedisClient, NodeRedisClient, NodeRedisCluster, RedisClient, RedisStoreFailure } from './command.ts'
export { DEFAULT_COMMAND_TIMEOUT, RedisStoreError } from './command.ts'
export type { RedisDedupeStoreOptions } from './dedupe-store.ts'
export { DEFAULT_DEDUPE_PREFIX, redisDedupeStore } from './dedupe-store.ts'
export type { RedisTokenStore, RedisTokenStoreOptions, ReleaseLock, StoredToken } from './token-store.ts'
export { DEFAULT_LOCK_TTL, DEFAULT_TOKEN_KEY, redisTokenStore } from './token-store.ts'
