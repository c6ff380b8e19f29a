/**
 * The hand-off benchmark's worker process: runs each queued delivery's work (`work ms` of waiting,
 * as a handler that calls a database or an API does) through `createWorker` of @hookguard/bullmq,
 * and reports, per delivery, the delay from its receipt to the start of its handler.
 *
 *   node --import tsx bench/handoff-worker.ts <redis url> <work ms> <concurrency>
 */
import { setPriority } from 'node:os'
import { createWorker } from '@hookguard/bullmq'
import { HANDOFF_QUEUE } from './handoff-shared.ts'

const [redisUrl, workArg, concurrencyArg] = process.argv.slice(2) as [string, string, string]
// Background work, as a deployment's workers are to its receivers (elsewhere, or beneath them): on
// two shared cores, at the same priority, the worker's turns would land inside the answers measured.
setPriority(19)
const workMs = Number(workArg)
const { hostname, port } = new URL(redisUrl)
const delays: number[] = []
let firstAt = 0
let lastAt = 0

const worker = createWorker(
  HANDOFF_QUEUE,
  async (delivery) => {
    const now = Date.now()
    delays.push(now - delivery.receivedAt.getTime())
    if (firstAt === 0) firstAt = now
    if (workMs > 0) await new Promise((resolve) => setTimeout(resolve, workMs))
    lastAt = Date.now()
  },
  { connection: { host: hostname, port: Number(port) }, concurrency: Number(concurrencyArg) },
)
await worker.waitUntilReady()
process.send?.({ ready: true })
process.on('message', async (message) => {
  if ((message as { report?: boolean }).report) process.send?.({ delays, firstAt, lastAt })
  if ((message as { close?: boolean }).close) {
    await worker.close()
    process.exit(0)
  }
})
process.on('disconnect', () => process.exit(0))
