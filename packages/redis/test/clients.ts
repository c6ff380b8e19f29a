import { Redis as IoRedis5 } from 'ioredis'
import { Redis as IoRedis6 } from 'ioredis6'
import { createClient as createNodeRedis5 } from 'redis'
import { createClient as createNodeRedis4 } from 'redis4'
import { createClient as createNodeRedis6 } from 'redis6'
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
  connect(url: string): Promise<Connected>
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

function nodeRedis(name: string, create: (url: string) => NodeRedisLike): Flavour {
  return {
    name,
    async connect(url) {
      const client = create(url)
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

function ioRedis(name: string, create: (url: string) => IoRedisLike): Flavour {
  return {
    name,
    async connect(url) {
      const client = create(url)
      client.on('error', ignore)
      await client.connect()
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

// Each client is passed to the stores as the library made it, typed as the library types it:
// the assignments below are the check that every supported version fits `RedisClient`.
const stores = {
  nodeRedis4: (url: string) => createNodeRedis4({ url }) satisfies RedisClient,
  nodeRedis5: (url: string) => createNodeRedis5({ url }) satisfies RedisClient,
  nodeRedis6: (url: string) => createNodeRedis6({ url }) satisfies RedisClient,
  ioRedis5: (url: string) => new IoRedis5(url, { lazyConnect: true }) satisfies RedisClient,
  ioRedis6: (url: string) => new IoRedis6(url, { lazyConnect: true }) satisfies RedisClient,
}

/** Every client the package supports, each tested against the same real server. */
export const flavours: Flavour[] = [
  nodeRedis('node-redis 4', stores.nodeRedis4),
  nodeRedis('node-redis 5', stores.nodeRedis5),
  nodeRedis('node-redis 6', stores.nodeRedis6),
  ioRedis('ioredis 5', stores.ioRedis5),
  ioRedis('ioredis 6', stores.ioRedis6),
]

/** A key prefix of this test's own, so tests can share one server (REDIS_URL) without meeting. */
export function uniquePrefix(): string {
  return `hookguard-test:${globalThis.crypto.randomUUID()}:`
}
