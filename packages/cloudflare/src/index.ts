// @hookguard/cloudflare: each delivery handled once on Cloudflare Workers, across every isolate,
// with a dedupe store kept in Durable Objects. Bind and export `HookguardDedupe`, then pass
// `durableObjectDedupeStore(env.DEDUPE)` as `dedupe.store` to @hookguard/hono or @hookguard/fetch.
export { DEFAULT_MAX_ROWS, MAX_KEY_LENGTH } from './checks.ts'
export type { ClaimAnswer } from './claims.ts'
export { HookguardDedupe } from './durable-object.ts'
export type { DedupeNamespace, DurableObjectDedupeStoreOptions } from './store.ts'
export { DEFAULT_SHARDS, durableObjectDedupeStore, MAX_SHARDS } from './store.ts'
