import { describe, expect, it } from 'vitest'
import { type NodeRedisClient, RedisStoreError, redisDedupeStore, redisTokenStore } from '../src/index.ts'

// Clients that misbehave on purpose, for what a real server will not do on demand: hang, or fail
// with an error that quotes the command and the connection string.

const FINGERPRINT = 'c0535e4be2b79ffd93291305436bf889314e4a3faec05ecffcbb7df31ad9e51a'
const URL_WITH_PASSWORD = 'redis://app:hunter2-pass@redis.internal:6380/0'

/** A node-redis-shaped client: `answer` decides each reply; every command is recorded. */
function fakeClient(answer: (args: string[]) => Promise<unknown>): NodeRedisClient & { sent: string[][] } {
  const sent: string[][] = []
  return {
    sent,
    isReady: true,
    sendCommand: (args: string[]) => {
      sent.push(args)
      return answer(args)
    },
  } as NodeRedisClient & { sent: string[][] }
}

const never = () => new Promise<never>(() => {})

describe('a Redis that does not answer', () => {
  it('makes a claim reject after commandTimeout with store_unavailable', async () => {
    const store = redisDedupeStore(
      fakeClient(() => never()),
      { commandTimeout: 50 },
    )
    const began = Date.now()
    const error = await store.claim(FINGERPRINT, 30_000).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RedisStoreError)
    expect(error).toMatchObject({ code: 'store_unavailable', failure: 'timeout' })
    expect(Date.now() - began).toBeLessThan(1000)
  })

  it('has the claim undone after it, so a claim that runs late holds nothing', async () => {
    const client = fakeClient((args) => (args[0] === 'SET' ? never() : Promise.resolve(0)))
    await redisDedupeStore(client, { commandTimeout: 50 })
      .claim(FINGERPRINT, 30_000)
      .catch(() => {})
    await new Promise((resolve) => setTimeout(resolve, 10))
    const [set, undo] = client.sent
    expect(set?.slice(0, 2)).toEqual(['SET', `hookguard:dedupe:${FINGERPRINT}`])
    // The compare-and-delete of exactly that claim's value.
    expect(undo?.[0]).toBe('EVAL')
    expect(undo?.slice(2)).toEqual(['1', `hookguard:dedupe:${FINGERPRINT}`, set?.[2]])
  })

  it('has a refresh lock that timed out undone too', async () => {
    const client = fakeClient((args) => (args[0] === 'SET' ? never() : Promise.resolve(0)))
    await expect(redisTokenStore(client, { commandTimeout: 50 }).lock?.()).rejects.toMatchObject({ code: 'store_unavailable' })
    await new Promise((resolve) => setTimeout(resolve, 10))
    const [set, undo] = client.sent
    expect(undo?.slice(2)).toEqual(['1', 'hookguard:token:lock', set?.[2]])
  })
})

describe('a client that fails a command', () => {
  const failing = () =>
    fakeClient((args) => {
      const error = Object.assign(new Error(`connect ECONNREFUSED ${URL_WITH_PASSWORD} while sending ${args.join(' ')}`), {
        code: 'ECONNREFUSED',
        url: URL_WITH_PASSWORD,
      })
      return Promise.reject(error)
    })

  it('rejects with the error code and the prefix, never the key, the value, or the URL', async () => {
    const error = await redisDedupeStore(failing(), { prefix: 'app:dedupe:' })
      .claim(FINGERPRINT, 30_000)
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'store_unavailable', failure: 'error' })
    const message = String((error as Error).message)
    expect(message).toBe('@hookguard/redis: Redis SET failed (ECONNREFUSED) (keys under "app:dedupe:")')
    expect((error as Error).cause).toBeUndefined()
    expect(JSON.stringify(error)).not.toContain('hunter2')
  })

  it('keeps the token out of the error when invalidating it fails', async () => {
    const error = await Promise.resolve(redisTokenStore(failing()).invalidate?.('secret-access-token')).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RedisStoreError)
    expect(String((error as Error).message)).not.toContain('secret-access-token')
    expect(String((error as Error).message)).not.toContain('hunter2')
  })

  it('shows a Redis error reply by its leading word only', async () => {
    const client = fakeClient(() =>
      Promise.reject(new Error(`WRONGTYPE Operation against a key holding the wrong kind of value ${FINGERPRINT}`)),
    )
    const error = await redisDedupeStore(client)
      .claim(FINGERPRINT, 30_000)
      .catch((e: unknown) => e)
    expect(String((error as Error).message)).toBe('@hookguard/redis: Redis SET failed (WRONGTYPE) (keys under "hookguard:dedupe:")')
  })
})

describe('a client that says it is not connected', () => {
  it('is sent nothing, and the store rejects at once', async () => {
    const client = Object.assign(
      fakeClient(() => Promise.resolve('OK')),
      { isReady: false },
    )
    const error = await redisDedupeStore(client)
      .claim(FINGERPRINT, 30_000)
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'store_unavailable', failure: 'disconnected' })
    expect(client.sent).toEqual([])
  })

  it('is recognised in ioredis’s shape too (status reconnecting)', async () => {
    const sent: string[] = []
    const client = {
      status: 'reconnecting',
      call: async (command: string) => {
        sent.push(command)
        return 'OK'
      },
    }
    await expect(redisDedupeStore(client).claim(FINGERPRINT, 30_000)).rejects.toMatchObject({ failure: 'disconnected' })
    expect(sent).toEqual([])
  })
})
