/**
 * One receiver instance of the multi-instance run (cluster/run.ts starts several): an Express app
 * whose webhook route dedupes through the shared Redis, and whose handler takes a few
 * milliseconds, as real work does, so that concurrent duplicates meet a claim in progress. It
 * reports each handled event to the parent, which counts them across instances. With `handoff`,
 * the route puts each delivery on a BullMQ queue instead and answers 202; worker.ts runs them.
 * `node --conditions=@hookguard/source --import tsx load/cluster/receiver.ts <redis-url> <secret> [handoff]`
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { handoff } from '@hookguard/bullmq'
import { webhook } from '@hookguard/express'
import { redisDedupeStore } from '@hookguard/redis'
import { Queue } from 'bullmq'
import express from 'express'
import { createClient } from 'redis'
import { CLUSTER_QUEUE } from './shared.ts'

const [redisUrl, secret, variant] = process.argv.slice(2)
if (redisUrl === undefined || secret === undefined) throw new Error('usage: receiver.ts <redis-url> <secret> [handoff]')

const client = createClient({ url: redisUrl })
await client.connect()
const { hostname, port } = new URL(redisUrl)
const queue = variant === 'handoff' ? new Queue(CLUSTER_QUEUE, { connection: { host: hostname, port: Number(port) } }) : undefined

const app = express()
const hook = webhook<{ event: string; data: { id: number } }>({
  auth: { mode: 'secret', secret },
  dedupe: { store: redisDedupeStore(client), ttl: 600, processingTtl: 10 },
  ...(queue && { handoff: handoff(queue) }),
})
app.post('/webhooks', hook, async (req, res) => {
  await sleep(2 + Math.random() * 8)
  process.send?.({ handled: req.body.data.id })
  res.sendStatus(204)
})

const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address()
  process.send?.({ port: typeof address === 'object' && address !== null ? address.port : 0 })
})
process.on('disconnect', () => {
  server.close()
  void client.quit()
  void queue?.close()
})
