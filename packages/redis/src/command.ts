/** How long a store waits for Redis by default before it gives up on a command. */
export const DEFAULT_COMMAND_TIMEOUT = 1000

/** A node-redis client (`createClient()` from `redis`, versions 4 to 6), connected. */
export interface NodeRedisClient {
  sendCommand(args: string[]): Promise<unknown>
}

/**
 * A node-redis Redis Cluster client (`createCluster()` from `redis`, versions 4 to 6), connected.
 * Its raw-command method takes the command's first key, which picks the node to send it to.
 */
export interface NodeRedisCluster {
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>
  getSlotMaster(slot: number): unknown
}

/** An ioredis client (`new Redis()` from `ioredis`, versions 5 and 6), or its Redis Cluster client (`new Cluster()`). */
export interface IoRedisClient {
  call(command: string, ...args: string[]): Promise<unknown>
}

/**
 * Your own Redis client: node-redis or ioredis, on a single node or a Redis Cluster. The stores
 * send it plain commands only (`SET` with `NX`/`PX`, `GET`, `EVAL`), each on one key, through
 * the one method each library has for raw commands, so no version of either is pinned.
 */
export type RedisClient = NodeRedisClient | NodeRedisCluster | IoRedisClient

/** Why a command did not succeed: the client had no connection, Redis did not answer in time, or the client or server refused it. */
export type RedisStoreFailure = 'disconnected' | 'timeout' | 'error'

/**
 * Redis could not be used. The message names the command, the key prefix and, where the client
 * gave one, the error's code (`ECONNREFUSED`, `NOAUTH`…); never a full key, a value, the Redis URL
 * or the client's own error, which may carry all three.
 */
export class RedisStoreError extends Error {
  override readonly name = 'RedisStoreError'
  /** What the receiver answers with: 503 `store_unavailable`. */
  readonly code = 'store_unavailable'
  readonly failure: RedisStoreFailure
  /**
   * The client error's code or the Redis error reply's leading word (`ECONNRESET`, `CLUSTERDOWN`),
   * where the client gave one; the same word the message names.
   */
  readonly reason: string | undefined

  constructor(message: string, failure: RedisStoreFailure, reason?: string) {
    super(`@hookguard/redis: ${message}`)
    this.failure = failure
    this.reason = reason
  }
}

/**
 * Sends one command; resolves its reply or rejects with a `RedisStoreError` within `timeout` ms.
 * `undo` is a command that cancels this one's effect: when this one was handed to the client but
 * failed or timed out, `undo` is handed over after it, unawaited. A client that queued or resends
 * the first (both libraries do across a reconnect) runs the two in order when Redis returns, so a
 * claim refused to its caller does not go on holding the key.
 */
export type Send = (args: string[], undo?: string[]) => Promise<unknown>

/**
 * Binds a client to one way of sending raw commands, chosen by shape: ioredis has
 * `call(command, ...args)` (its `Cluster` too), node-redis `sendCommand(args)`, and node-redis's
 * cluster `sendCommand(firstKey, isReadonly, args)`, told apart by its `getSlotMaster` (ioredis
 * has a `sendCommand` too, of another kind, so `call` is looked for first).
 */
export function commandSender(client: RedisClient, { prefix, timeout, label }: { prefix: string; timeout: number; label: string }): Send {
  const raw = rawSender(client, label)
  return async (args, undo) => {
    const command = args[0] as string
    if (disconnected(client)) {
      // Fail now rather than queue: a queued claim would run when Redis returns, long after its
      // delivery was refused, and hold the fingerprint for nobody until its TTL ran out.
      throw new RedisStoreError(`Redis is not connected; ${command} not sent (keys under "${prefix}")`, 'disconnected')
    }
    let timer: ReturnType<typeof setTimeout> | undefined
    // A client waiting to reconnect queues commands instead of failing them; the timeout is
    // what turns "Redis is gone" into a prompt answer.
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new RedisStoreError(`Redis did not answer ${command} within ${timeout} ms (keys under "${prefix}")`, 'timeout')),
        timeout,
      )
    })
    try {
      return await Promise.race([
        Promise.resolve()
          .then(() => raw(args))
          .catch((error: unknown) => {
            const reason = safeReason(error)
            throw new RedisStoreError(
              `Redis ${command} failed${reason === undefined ? '' : ` (${reason})`} (keys under "${prefix}")`,
              'error',
              reason,
            )
          }),
        expired,
      ])
    } catch (error) {
      if (undo !== undefined) {
        Promise.resolve()
          .then(() => raw(undo))
          .catch(() => {})
      }
      throw error
    } finally {
      clearTimeout(timer)
    }
  }
}

/**
 * Whether the client says it has no connection: node-redis `isReady === false` (not connected
 * yet, or reconnecting; a cluster of node-redis 4 and 5 has only `isOpen`), ioredis `status`
 * `reconnecting`, `close` or `end` (its `Cluster` too).
 * ioredis's `wait` (lazyConnect) and `connecting` still send: the first command connects.
 */
function disconnected(client: RedisClient): boolean {
  const { isReady, isOpen, status } = client as { isReady?: unknown; isOpen?: unknown; status?: unknown }
  if (typeof isReady === 'boolean') return !isReady
  if (isOpen === false) return true
  return status === 'reconnecting' || status === 'close' || status === 'end'
}

function rawSender(client: RedisClient, label: string): (args: string[]) => Promise<unknown> {
  if (client !== null && typeof client === 'object') {
    // ioredis's single-node and cluster clients alike: a cluster finds each command's keys
    // itself (EVAL's from its key count) and sends it to the master of their slot.
    if ('call' in client && typeof client.call === 'function') {
      const io = client as IoRedisClient
      return ([command, ...rest]) => io.call(command as string, ...rest)
    }
    if ('sendCommand' in client && typeof client.sendCommand === 'function') {
      // node-redis's cluster is told the key that routes the command. Never read-only: a read
      // on a replica (with the cluster's `useReplicas`) may miss a claim the master just took.
      if ('getSlotMaster' in client && typeof client.getSlotMaster === 'function') {
        const cluster = client as NodeRedisCluster
        return (args) => cluster.sendCommand(firstKey(args), false, args)
      }
      const node = client as NodeRedisClient
      return (args) => node.sendCommand(args)
    }
  }
  throw new TypeError(
    `@hookguard/redis: ${label} needs a Redis client: createClient() or createCluster() from redis (node-redis 4 to 6), or new Redis() or new Cluster() from ioredis 5 or 6`,
  )
}

/**
 * The key a command is routed by in a cluster: `EVAL script numkeys key…`'s first key, or the
 * argument after the command's name for the others the stores send (`SET`, `GET`). Every command
 * of the stores names one key, so it never spans two slots.
 */
function firstKey(args: string[]): string | undefined {
  const [command = '', , numkeys] = args
  if (/^EVAL(SHA)?(_RO)?$/i.test(command)) return Number(numkeys) > 0 ? args[3] : undefined
  return args[1]
}

/**
 * The part of a client error that is safe to show: its `code` (`ECONNREFUSED`) or the leading
 * word of a Redis error reply (`NOAUTH`, `WRONGTYPE`). The rest of a message can quote the
 * command's arguments or the server's address with credentials.
 */
function safeReason(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined
  const { code, message, name } = error as { code?: unknown; message?: unknown; name?: unknown }
  const safe = /^[A-Z][A-Z0-9_]{1,31}$/
  if (typeof code === 'string' && safe.test(code)) return code
  const word = typeof message === 'string' ? message.split(' ', 1)[0] : undefined
  if (word !== undefined && safe.test(word)) return word
  if (typeof name === 'string' && /^[A-Za-z]{1,40}Error$/.test(name) && name !== 'Error') return name
  return undefined
}

/** A token unique to one claim or lock, so a late release never frees someone else's. */
export function uniqueToken(): string {
  return globalThis.crypto.randomUUID()
}

export function checkTimeout(timeout: number, label: string): void {
  if (!Number.isFinite(timeout) || timeout <= 0)
    throw new TypeError(`@hookguard/redis: ${label} commandTimeout must be a number of milliseconds above 0`)
}

export function checkPrefix(prefix: string, name: string, label: string): void {
  if (typeof prefix !== 'string' || prefix === '') throw new TypeError(`@hookguard/redis: ${label} ${name} must be a non-empty string`)
}
