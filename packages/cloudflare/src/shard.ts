/**
 * Which object a key lives in. The key is hashed whole, not read by its first hex digits: the
 * default key is `<scope>:<fingerprint>`, and the scope is the same for every delivery of one
 * secret or tenant, so its prefix would send them all to one object. FNV-1a (32 bits) spreads
 * any key, the core's or one of `dedupe.key`, evenly enough, and costs nothing beside an RPC.
 */
export function shardOf(key: string, shards: number): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0) % shards
}

/** The name each shard's object is found by (`idFromName`). */
export function shardName(shard: number): string {
  return `hookguard-dedupe:${shard}`
}
