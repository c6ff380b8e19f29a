import { Cluster as IoCluster5, Redis as IoRedis5 } from 'ioredis'
import { Cluster as IoCluster6, Redis as IoRedis6 } from 'ioredis6'
import { createCluster as createNodeCluster5, createClient as createNodeRedis5 } from 'redis'
import { createCluster as createNodeCluster4, createClient as createNodeRedis4 } from 'redis4'
import { createCluster as createNodeCluster6, createClient as createNodeRedis6 } from 'redis6'
import { inject } from 'vitest'
import type { RedisClient } from '../src/index.ts'

/** A connected client of one library and version, as a user would create it. */
export interface Connected {
  client: RedisClient
  /** A plain command, for the tests' own look at what is in Redis. */
  raw(args: string[]): Promise<unknown>
  close(): Promise<void>
}

export interface Flavour {
  name: string
  /** Whether it is a Redis Cluster client, to connect to a cluster's node (which it discovers the rest from). */
  cluster: boolean
  /**
   * `reconnectEveryMs`: reconnect at that pace rather than the library's own (node-redis 5 and 6
   * wait up to 2 s between tries), for a test that times what follows a server's return.
   */
  connect(url: string, options?: { reconnectEveryMs?: number }): Promise<Connected>
}

// The libraries report a lost connection as an `error` event, and an unheard one ends the process.
const ignore = () => {}

/** What the tests need of a node-redis client, whichever major version made it. */
interface NodeRedisLike {
  isOpen: boolean
  on(event: 'error', listener: () => void): unknown
  connect(): Promise<unknown>
  sendCommand(args: string[]): Promise<unknown>
  disconnect(): Promise<void> | void
}

function nodeRedis(name: string, create: (url: string, reconnectEveryMs?: number) => NodeRedisLike): Flavour {
  return {
    name,
    cluster: false,
    async connect(url, { reconnectEveryMs } = {}) {
      const client = create(url, reconnectEveryMs)
      client.on('error', ignore)
      await client.connect()
      return {
        client,
        raw: (args) => client.sendCommand(args),
        async close() {
          // Not quit(): a client whose server is stopped never finishes quitting.
          if (client.isOpen) await Promise.resolve(client.disconnect()).catch(ignore)
        },
      }
    },
  }
}

/** What the tests need of an ioredis client, 5 or 6. */
interface IoRedisLike {
  on(event: 'error', listener: () => void): unknown
  connect(): Promise<unknown>
  call(command: string, ...args: string[]): Promise<unknown>
  disconnect(): void
}

/**
 * How many new clients a cluster flavour of ioredis tries before its connection fails. An ioredis
 * Cluster gives up its first connection, with "None of startup nodes is available", when no node
 * answers `CLUSTER SLOTS` within its `slotsRefreshTimeout` (1 s): beside a second whole suite on a
 * slow machine, it once did. An app starting up would try again, and so do the tests: what they
 * judge starts once the client is connected, with the library's own options.
 */
const CLUSTER_CONNECT_TRIES = 3

function ioRedis(name: string, create: (url: string, reconnectEveryMs?: number) => IoRedisLike, cluster = false): Flavour {
  return {
    name,
    cluster,
    async connect(url, { reconnectEveryMs } = {}) {
      let client = create(url, reconnectEveryMs)
      client.on('error', ignore)
      for (let tries = 1; ; tries++) {
        try {
          await client.connect()
          break
        } catch (error) {
          client.disconnect()
          if (!cluster || tries === CLUSTER_CONNECT_TRIES) throw error
          client = create(url, reconnectEveryMs)
          client.on('error', ignore)
        }
      }
      return {
        client,
        raw: ([command, ...args]) => client.call(command as string, ...args),
        async close() {
          client.disconnect()
        },
      }
    },
  }
}

/** What the tests need of a node-redis cluster client: its raw command takes the key that routes it. */
interface NodeRedisClusterLike {
  isOpen: boolean
  on(event: 'error', listener: () => void): unknown
  connect(): Promise<unknown>
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>
  getSlotMaster(slot: number): unknown
  disconnect(): Promise<void>
}

function nodeRedisCluster(name: string, create: (url: string) => NodeRedisClusterLike): Flavour {
  return {
    name,
    cluster: true,
    async connect(url) {
      const client = create(url)
      client.on('error', ignore)
      await client.connect()
      return {
        client,
        // The tests' own commands name one key, after the command's name.
        raw: (args) => client.sendCommand(args[1], false, args),
        async close() {
          if (client.isOpen) await client.disconnect().catch(ignore)
        },
      }
    },
  }
}

/** The reconnection pace `every` ms sets, in each library's option; none, the library's own. */
const nodeRedisPace = (every: number | undefined) => (every === undefined ? {} : { reconnectStrategy: () => every })
const ioRedisPace = (every: number | undefined) => (every === undefined ? {} : { retryStrategy: () => every })

// Each client is passed to the stores as the library made it, typed as the library types it:
// the assignments below are the check that every supported version fits `RedisClient`.
const stores = {
  nodeRedis4: (url: string, every?: number) => createNodeRedis4({ url, socket: nodeRedisPace(every) }) satisfies RedisClient,
  nodeRedis5: (url: string, every?: number) => createNodeRedis5({ url, socket: nodeRedisPace(every) }) satisfies RedisClient,
  nodeRedis6: (url: string, every?: number) => createNodeRedis6({ url, socket: nodeRedisPace(every) }) satisfies RedisClient,
  ioRedis5: (url: string, every?: number) => new IoRedis5(url, { lazyConnect: true, ...ioRedisPace(every) }) satisfies RedisClient,
  ioRedis6: (url: string, every?: number) => new IoRedis6(url, { lazyConnect: true, ...ioRedisPace(every) }) satisfies RedisClient,
  nodeCluster4: (url: string) => createNodeCluster4({ rootNodes: [{ url }] }) satisfies RedisClient,
  nodeCluster5: (url: string) => createNodeCluster5({ rootNodes: [{ url }] }) satisfies RedisClient,
  nodeCluster6: (url: string) => createNodeCluster6({ rootNodes: [{ url }] }) satisfies RedisClient,
  ioCluster5: (url: string) => new IoCluster5([url], { lazyConnect: true }) satisfies RedisClient,
  ioCluster6: (url: string) => new IoCluster6([url], { lazyConnect: true }) satisfies RedisClient,
}

/** Every client the package supports, each tested against the same real server. */
export const flavours: Flavour[] = [
  nodeRedis('node-redis 4', stores.nodeRedis4),
  nodeRedis('node-redis 5', stores.nodeRedis5),
  nodeRedis('node-redis 6', stores.nodeRedis6),
  ioRedis('ioredis 5', stores.ioRedis5),
  ioRedis('ioredis 6', stores.ioRedis6),
]

/** Every Redis Cluster client the package supports, each tested against the same real cluster. */
export const clusterFlavours: Flavour[] = [
  nodeRedisCluster('node-redis 4 cluster', stores.nodeCluster4),
  nodeRedisCluster('node-redis 5 cluster', stores.nodeCluster5),
  nodeRedisCluster('node-redis 6 cluster', stores.nodeCluster6),
  ioRedis('ioredis 5 Cluster', stores.ioCluster5, true),
  ioRedis('ioredis 6 Cluster', stores.ioCluster6, true),
]

/** A node of the Redis Cluster that test/cluster-setup.ts started for the project, if it could. */
export const clusterUrl: string | undefined = inject('redisClusterUrl')

/** What a store suite runs over: every single-node client, and every cluster client when there is a cluster. */
export const suiteFlavours: Flavour[] = [...flavours, ...(clusterUrl === undefined ? [] : clusterFlavours)]

/** Where `flavour` connects: the cluster for a cluster client, else the single server. */
export function urlFor(flavour: Flavour, serverUrl: string): string {
  if (!flavour.cluster) return serverUrl
  if (clusterUrl === undefined) throw new Error('no Redis Cluster was started for this project')
  return clusterUrl
}

/** A key prefix of this test's own, so tests can share one server (REDIS_URL) without meeting. */
export function uniquePrefix(): string {
  return `hookguard-test:${globalThis.crypto.randomUUID()}:`
}
