/**
 * What the BullMQ tests share: connections as a user opens them, a receiver app (Express) with
 * the hand-off, signed deliveries, and a bounded wait for something to come true.
 */
import { randomUUID } from 'node:crypto'
import { sign, type WebhookOptions } from '@hookguard/core'
import { webhook } from '@hookguard/express'
import { listen, type Reply, type Target } from '@hookguard/testkit/http'
import { Queue } from 'bullmq'
import express from 'express'
import { Redis } from 'ioredis'

export const SECRET = 'whsec-bullmq-4f1a9c'

// The libraries report a lost connection as an `error` event, and an unheard one ends the process.
const ignore = () => {}

/** A connection for a `Queue`: a command sent while Redis is away fails at once instead of waiting offline. */
export function queueConnection(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: null, enableOfflineQueue: false, retryStrategy: () => 100 })
  redis.on('error', ignore)
  return redis
}

/** A connection for a `Worker` (BullMQ blocks on it, so it must retry for ever) or for a store. */
export function workerConnection(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: null, retryStrategy: () => 100 })
  redis.on('error', ignore)
  return redis
}

/** A queue of its own name, so that tests on one server never see each other's jobs. */
export function uniqueQueue(url: string, name = `hooks-${randomUUID().slice(0, 8)}`): Queue {
  const queue = new Queue(name, { connection: queueConnection(url) })
  queue.on('error', ignore)
  return queue
}

/** Closes a queue and the connection it was given (BullMQ leaves a client it did not create open). */
export async function closeQueue(queue: Queue): Promise<void> {
  const connection = queue.opts.connection as Redis
  await queue.close().catch(ignore)
  connection.disconnect()
}

/** An Express app whose webhook route hands deliveries off; the route's own handler counts runs, which must stay 0. */
export async function receiverApp(options: WebhookOptions): Promise<Target & { routeRuns(): number }> {
  let runs = 0
  const app = express()
  app.post('/webhooks', webhook(options), (_req, res) => {
    runs += 1
    res.sendStatus(204)
  })
  const target = await listen(app)
  return { ...target, routeRuns: () => runs }
}

/** A delivery as the service signs it. */
export async function signed(body: string, headers: Record<string, string> = {}) {
  return {
    path: '/webhooks',
    headers: { 'content-type': 'application/json', 'x-service-hmac-signature': await sign(body, SECRET), ...headers },
    body,
  }
}

/** The service's retries of one delivery: sent again until answered 2xx, `tries` times at most. */
export async function deliverUntilAccepted(send: () => Promise<Reply>, tries = 60, pauseMs = 100): Promise<Reply[]> {
  const replies: Reply[] = []
  for (let attempt = 0; attempt < tries; attempt++) {
    const reply = await send().catch((error: Error) => ({ status: 0, headers: {}, text: error.message }))
    replies.push(reply)
    if (reply.status >= 200 && reply.status < 300) return replies
    await new Promise((resolve) => setTimeout(resolve, pauseMs))
  }
  throw new Error(`not accepted after ${tries} tries: ${replies.map((reply) => reply.status).join(' ')}`)
}

/** Waits until `check` returns a value other than `undefined`, asking every `everyMs`, for at most `ms`. */
export async function until<T>(check: () => Promise<T | undefined>, what: string, ms = 30_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check().catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
