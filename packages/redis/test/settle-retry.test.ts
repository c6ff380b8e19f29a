import { createReceiver, type IncomingRequest, sign } from '@hookguard/core'
import { type RedisServer, startRedis } from '@hookguard/testkit/redis-server'
import { createClient } from 'redis6'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type NodeRedisClient, redisDedupeStore } from '../src/index.ts'
import { uniquePrefix } from './clients.ts'

// A real Redis behind a client that fails chosen commands the way a Redis Cluster does while one
// of its masters fails over (cluster-failover.test.ts produces the real moment; here each case is
// exact): the `done` mark and the release are sent again until they land; the claim is not.

const SECRET = 'whsec-redis-settle-retry'

let server: RedisServer
let real: ReturnType<typeof createClient>
beforeAll(async () => {
  server = await startRedis()
  real = createClient({ url: server.url })
  real.on('error', () => {})
  await real.connect()
})
afterAll(async () => {
  vi.restoreAllMocks()
  await real?.disconnect().catch(() => {})
  await server?.stop().catch(() => {})
})

type Command = 'claim' | 'complete' | 'release'

/** The real client, except that the first `times` commands of `kind` fail with the reply `error`. */
function failing(kind: Command, times: number, error: string): { client: NodeRedisClient; sent: Record<Command, number> } {
  const sent: Record<Command, number> = { claim: 0, complete: 0, release: 0 }
  const client: NodeRedisClient & { isReady: boolean } = {
    get isReady() {
      return real.isReady
    },
    async sendCommand(args: string[]) {
      const command = commandOf(args)
      if (command !== undefined) {
        sent[command]++
        if (command === kind && sent[command] <= times) throw new Error(`${error} (as the server answers it)`)
      }
      return real.sendCommand(args)
    },
  }
  return { client, sent }
}

function commandOf(args: string[]): Command | undefined {
  if (args[0] === 'SET') return 'claim'
  if (args[0] !== 'EVAL') return undefined
  if (args[4] === 'done') return 'complete'
  return args[1]?.includes('DEL') ? 'release' : undefined
}

async function delivery(): Promise<IncomingRequest> {
  const body = JSON.stringify({ event: 'order.paid', orderNo: globalThis.crypto.randomUUID() })
  return { method: 'POST', url: '/webhooks', headers: { 'x-service-hmac-signature': await sign(body, SECRET) }, body }
}

function receiverOver(client: NodeRedisClient, prefix: string) {
  return createReceiver({
    auth: { mode: 'secret', secret: SECRET },
    dedupe: { store: redisDedupeStore(client, { prefix, commandTimeout: 500 }) },
  })
}

/** Delivers `request` as the service does, until a final answer (409 retried), and counts the handler's runs. */
async function deliverUntilFinal(receiver: ReturnType<typeof createReceiver>, request: IncomingRequest, runs: { count: number }) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const result = await receiver.verify(request)
    if (result.ok) {
      runs.count++
      await result.settle?.(true)
      return 'handled'
    }
    if (result.response.status !== 409) return result.response.status
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return 'gave up'
}

describe('redisDedupeStore when a claim’s answer is lost and the client sends it again', () => {
  it('keeps the claim its first SET took, and handles the delivery at once and once', async () => {
    // As ioredis does by default when the connection drops after Redis ran a command and before
    // its answer arrived: on reconnecting it sends the command again, and that SET NX finds the
    // key its first send took.
    let sets = 0
    const client: NodeRedisClient & { isReady: boolean } = {
      get isReady() {
        return real.isReady
      },
      async sendCommand(args: string[]) {
        if (args[0] === 'SET' && sets++ === 0) await real.sendCommand(args)
        return real.sendCommand(args)
      },
    }
    const prefix = uniquePrefix()
    const receiver = receiverOver(client, prefix)
    const request = await delivery()
    const first = await receiver.verify(request)
    // Before, the claim read as another's and the delivery was answered 409 until its TTL ran out.
    expect(first.ok ? 'claimed' : first.response.status).toBe('claimed')
    if (first.ok) await first.settle?.(true)
    const [key] = await real.keys(`${prefix}*`)
    expect(await real.get(key ?? '')).toBe('done')
    const again = await receiverOver(real as unknown as NodeRedisClient, prefix).verify(request)
    expect(again.ok ? 'ran' : again.response.status).toBe(200)
  })
})

describe('redisDedupeStore settling while a cluster fails over', () => {
  for (const [times, reply] of [
    [1, 'CLUSTERDOWN The cluster is down'],
    [2, 'CLUSTERDOWN The cluster is down'],
    [2, 'TRYAGAIN Multiple keys request during rehashing of slot'],
    [1, 'LOADING Redis is loading the dataset in memory'],
  ] as const) {
    it(`marks the delivery done when its done mark meets ${reply.split(' ')[0]} ${times}× first, and never runs it again`, async () => {
      const prefix = uniquePrefix()
      const { client, sent } = failing('complete', times, reply)
      const receiver = receiverOver(client, prefix)
      const request = await delivery()
      const runs = { count: 0 }
      expect(await deliverUntilFinal(receiver, request, runs)).toBe('handled')
      expect(sent.complete).toBe(times + 1)
      const [key] = await real.keys(`${prefix}*`)
      expect(await real.get(key ?? '')).toBe('done')
      // Copies after it, on this instance and another over a healthy client: answered, never run.
      const other = receiverOver(real as unknown as NodeRedisClient, prefix)
      for (const instance of [receiver, other]) {
        const again = await instance.verify(request)
        expect(again.ok ? 'ran' : again.response.status).toBe(200)
      }
      expect(runs.count).toBe(1)
    })
  }

  it('marks the delivery done when its done mark meets CLUSTERDOWN for longer than the store retries it, while the claim holds', async () => {
    const report = vi.spyOn(console, 'error').mockImplementation(() => {})
    const prefix = uniquePrefix()
    // About ten tries fill the store's 3 s; the receiver's own retries of the mark meet the rest.
    const { client, sent } = failing('complete', 15, 'CLUSTERDOWN The cluster is down')
    const receiver = receiverOver(client, prefix)
    const request = await delivery()
    const runs = { count: 0 }
    expect(await deliverUntilFinal(receiver, request, runs)).toBe('handled')
    const [key] = await real.keys(`${prefix}*`)
    for (const deadline = Date.now() + 10_000; (await real.get(key ?? '')) !== 'done' && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(await real.get(key ?? '')).toBe('done')
    expect(sent.complete).toBe(16)
    const again = await receiverOver(real as unknown as NodeRedisClient, prefix).verify(request)
    expect(again.ok ? 'ran' : again.response.status).toBe(200)
    expect(runs.count).toBe(1)
    report.mockRestore()
  }, 20_000)

  it('releases the claim of a failed handler when the release meets CLUSTERDOWN first, so a retry runs at once', async () => {
    const prefix = uniquePrefix()
    const { client, sent } = failing('release', 2, 'CLUSTERDOWN The cluster is down')
    const receiver = receiverOver(client, prefix)
    const request = await delivery()
    const first = await receiver.verify(request)
    if (!first.ok) throw new Error('expected a claimed delivery')
    await first.settle?.(false)
    expect(sent.release).toBe(3)
    expect(await real.keys(`${prefix}*`)).toEqual([])
    expect((await receiver.verify(request)).ok).toBe(true)
  })

  it('sends a claim that meets CLUSTERDOWN once, and answers 503 store_unavailable without running the handler', async () => {
    const prefix = uniquePrefix()
    const { client, sent } = failing('claim', 1, 'CLUSTERDOWN The cluster is down')
    const result = await receiverOver(client, prefix).verify(await delivery())
    expect(result.ok ? 'ran' : [result.response.status, result.error?.code]).toEqual([503, 'store_unavailable'])
    expect(sent.claim).toBe(1)
  })

  it('does not send again a done mark Redis refuses for good (NOAUTH)', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const { client, sent } = failing('complete', 1, 'NOAUTH Authentication required')
    const found = await redisDedupeStore(client, { prefix: uniquePrefix() }).claim('a-key', 30_000)
    if (found.state !== 'claimed') throw new Error('expected a claim')
    await expect(found.claim.complete(60_000)).rejects.toMatchObject({ code: 'store_unavailable', reason: 'NOAUTH' })
    expect(sent.complete).toBe(1)
  })

  it('gives up on a done mark that keeps meeting CLUSTERDOWN within a bound', async () => {
    const { client, sent } = failing('complete', Number.POSITIVE_INFINITY, 'CLUSTERDOWN The cluster is down')
    const found = await redisDedupeStore(client, { prefix: uniquePrefix(), commandTimeout: 500 }).claim('a-key', 30_000)
    if (found.state !== 'claimed') throw new Error('expected a claim')
    const began = Date.now()
    await expect(found.claim.complete(60_000)).rejects.toMatchObject({ code: 'store_unavailable', reason: 'CLUSTERDOWN' })
    const took = Date.now() - began
    // Within the receiver's default claimTimeout (5 s), having tried more than a few times.
    expect(took).toBeGreaterThan(2000)
    expect(took).toBeLessThan(4500)
    expect(sent.complete).toBeGreaterThan(5)
    expect(sent.complete).toBeLessThan(20)
  }, 10_000)
})
