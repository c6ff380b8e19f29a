/**
 * One worker process of the multi-instance run with `--handoff`: runs the deliveries the receivers
 * queued on BullMQ, each once across every worker through the shared Redis dedupe store, and
 * reports each handled event to the parent, which counts them across workers.
 * `node --conditions=@hookguard/source --import tsx load/cluster/worker.ts <redis-url>`
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { createWorker } from '@hookguard/bullmq'
import { redisDedupeStore } from '@hookguard/redis'
import { createClient } from 'redis'
import { CLUSTER_QUEUE } from './shared.ts'

const [redisUrl] = process.argv.slice(2)
if (redisUrl === undefined) throw new Error('usage: worker.ts <redis-url>')

const client = createClient({ url: redisUrl })
await client.connect()
const { hostname, port } = new URL(redisUrl)

const worker = createWorker<{ event: string; data: { id: number } }>(
  CLUSTER_QUEUE,
  async (delivery) => {
    await sleep(2 + Math.random() * 8)
    process.send?.({ handled: delivery.payload.data.id })
  },
  { connection: { host: hostname, port: Number(port) }, store: redisDedupeStore(client), ttl: 600, processingTtl: 10, concurrency: 32 },
)
await worker.waitUntilReady()
process.send?.({ ready: true })
process.on('disconnect', () => {
  void worker.close().then(() => client.quit())
})
