/**
 * One server of the hand-off benchmark (bench/handoff.ts), in a process of its own: Express 5 on
 * loopback, `POST /hooks` as `empty` or `control` (answers 202 and nothing else), `verified` (`webhook()`, then
 * 202 at once), `inline` (`webhook()`, then the handler's work before the answer, as apps do
 * without a queue) or `handoff` (`webhook()` with the delivery put on a BullMQ queue; a worker
 * process does the work). Tells its port over IPC.
 *
 *   node --import tsx bench/handoff-server.ts <empty|control|verified|inline|handoff> <work ms> [redis url]
 */
import type { AddressInfo } from 'node:net'
import { handoff } from '@hookguard/bullmq'
import { webhook } from '@hookguard/express'
import { Queue } from 'bullmq'
import express from 'express'
import { HANDOFF_QUEUE, SECRET } from './handoff-shared.ts'

const [variant, workArg, redisUrl] = process.argv.slice(2)
const workMs = Number(workArg)
const app = express()
const auth = { mode: 'secret' as const, secret: SECRET }

if (variant === 'empty' || variant === 'control') {
  app.post('/hooks', (_req, res) => {
    res.status(202).end()
  })
} else if (variant === 'inline') {
  app.post('/hooks', webhook({ auth }), async (_req, res) => {
    await new Promise((resolve) => setTimeout(resolve, workMs))
    res.status(200).json({ handled: true })
  })
} else if (variant === 'verified') {
  app.post('/hooks', webhook({ auth }), (_req, res) => {
    res.status(202).end()
  })
} else if (variant === 'handoff') {
  if (redisUrl === undefined) throw new Error('handoff-server: handoff needs a Redis URL')
  const { hostname, port } = new URL(redisUrl)
  const queue = new Queue(HANDOFF_QUEUE, { connection: { host: hostname, port: Number(port) } })
  await queue.waitUntilReady()
  app.post('/hooks', webhook({ auth, handoff: handoff(queue) }))
} else {
  throw new Error(`handoff-server: unknown variant ${variant}`)
}

const server = app.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.address() as AddressInfo).port })
})
// Sockets of an open-loop sender are many and kept alive: none is dropped for being idle mid-run.
server.keepAliveTimeout = 60_000
// Its own CPU time, asked for around the measured window: what one delivery costs the server.
process.on('message', (message) => {
  if ((message as { cpu?: boolean }).cpu) {
    const { user, system } = process.cpuUsage()
    process.send?.({ cpuUs: user + system })
  }
})
process.on('disconnect', () => process.exit(0))
