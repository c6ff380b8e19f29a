/**
 * The hand-off benchmark's worker process: runs each queued delivery's work (`work ms` of waiting,
 * as a handler that calls a database or an API does) through `createWorker` of @hookguard/bullmq,
 * and reports, per delivery, the delay from its receipt to the start of its handler.
 *
 *   node --import tsx bench/handoff-worker.ts <redis url> <work ms> <concurrency>
 */
import { spawnSync } from 'node:child_process'
import { setPriority } from 'node:os'
import { createWorker } from '@hookguard/bullmq'
import { HANDOFF_QUEUE } from './handoff-shared.ts'

const [redisUrl, workArg, concurrencyArg] = process.argv.slice(2) as [string, string, string]
// Background work, as a deployment's workers are to its receivers (elsewhere, or beneath them): on
// two shared cores, at the same priority, the worker's turns would land inside the answers measured.
// Linux's idle policy where there is one, `nice` 19 besides: a process under the idle policy gives
// its core up as soon as another wants it, where a nice-19 one may keep it for the rest of its
// slice. The hand-off's p50 read 3.9 ms idle against 5.3 ms at `nice` 19 on a quiet machine, and
// 3.0 against 13.2 and 16.7 ms beside another busy process, runs taken in turn (bench/notes.md,
// 1 December, evening).
setPriority(19)
const idle = spawnSync('chrt', ['--idle', '--all-tasks', '--pid', '0', String(process.pid)], { stdio: 'ignore' }).status === 0
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
process.send?.({ ready: true, policy: idle ? 'idle' : 'nice' })
process.on('message', async (message) => {
  if ((message as { report?: boolean }).report) process.send?.({ delays, firstAt, lastAt })
  // Its own CPU time, asked for around each measured window: what the worker takes from the machine's cores.
  if ((message as { cpu?: boolean }).cpu) {
    const { user, system } = process.cpuUsage()
    process.send?.({ cpuUs: user + system })
  }
  if ((message as { close?: boolean }).close) {
    await worker.close()
    process.exit(0)
  }
})
process.on('disconnect', () => process.exit(0))
