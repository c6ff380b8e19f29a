// @hookguard/cloudflare: each delivery handled once on Cloudflare Workers, across every isolate,
// with a dedupe store kept in Durable Objects. Bind and export `HookguardDedupe`, then pass
// `durableObjectDedupeStore(env.DEDUPE)` as `dedupe.store` to @hookguard/hono or @hookguard/fetch.
// With Cloudflare Queues, `queueHandoff(env.WEBHOOKS)` is their `handoff` option, and
// `queueConsumer(handler)` the Worker's `queue` export that runs each delivery once.
export { DEFAULT_MAX_ROWS, MAX_KEY_LENGTH } from './checks.ts'
export type { ClaimAnswer } from './claims.ts'
export { HookguardDedupe } from './durable-object.ts'
export type { QueueBatch, QueueConsumerOptions, QueueMessage } from './queue-consumer.ts'
export { queueConsumer } from './queue-consumer.ts'
export type { QueueHandoffOptions, QueueProducer } from './queue-handoff.ts'
export { DEFAULT_QUEUE_RETENTION, MAX_QUEUED_BODY, queueHandoff } from './queue-handoff.ts'
export type { DedupeNamespace, DurableObjectDedupeStoreOptions } from './store.ts'
export { DEFAULT_SHARDS, durableObjectDedupeStore, MAX_SHARDS } from './store.ts'
