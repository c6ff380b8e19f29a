import { DurableObject } from 'cloudflare:workers'
import type { DurableObjectNamespace, ExecutionContext, MessageBatch, Queue } from '@cloudflare/workers-types'
import { durableObjectDedupeStore, type HookguardDedupe, queueConsumer, queueHandoff } from '@hookguard/cloudflare'
import { webhook as fetchWebhook } from '@hookguard/fetch'
import { webhook as honoWebhook } from '@hookguard/hono'
import { Hono } from 'hono'
import { type ConsumedCounts, DEAD_LETTER_QUEUE, MAX_BODY_SIZE, QUEUES_SECRET, type QueuedPayload } from './suite/queues.ts'

export { HookguardDedupe } from '@hookguard/cloudflare'

/**
 * The Worker that `queues-workerd.ts` runs in workerd, without `nodejs_compat`: receivers that hand
 * each delivery off to a Cloudflare Queue (`queueHandoff`), the queue's consumer (`queueConsumer`),
 * whose handler records its runs in a ledger object, and the dead-letter queue's consumer, which
 * records what reached it. Built once per isolate, as the README tells users to.
 */

interface Env {
  WEBHOOKS: Queue
  STEADY: Queue
  DEDUPE: DurableObjectNamespace<HookguardDedupe>
  LEDGER: DurableObjectNamespace<Ledger>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Per delivery: handler runs, the queue messages that carried it, what was dead-lettered, and what the successful run saw. */
export class Ledger extends DurableObject {
  #ready = false

  seen(id: string, message: string): void {
    this.#table()
    this.ctx.storage.sql.exec('INSERT OR IGNORE INTO messages (id, message) VALUES (?, ?)', id, message)
  }

  start(id: string): number {
    this.#table()
    const { sql } = this.ctx.storage
    sql.exec('INSERT INTO runs (id, started) VALUES (?, 1) ON CONFLICT (id) DO UPDATE SET started = started + 1', id)
    return sql.exec<{ started: number }>('SELECT started FROM runs WHERE id = ?', id).one().started
  }

  finish(id: string, ok: boolean, raw: string | null = null, payload: string | null = null): void {
    this.#table()
    if (ok) this.ctx.storage.sql.exec('UPDATE runs SET completed = completed + 1, raw = ?, payload = ? WHERE id = ?', raw, payload, id)
    else this.ctx.storage.sql.exec('UPDATE runs SET failed = failed + 1 WHERE id = ?', id)
  }

  deadLetter(id: string): void {
    this.#table()
    this.ctx.storage.sql.exec('INSERT INTO dead (id, count) VALUES (?, 1) ON CONFLICT (id) DO UPDATE SET count = count + 1', id)
  }

  counts(): ConsumedCounts {
    this.#table()
    const { sql } = this.ctx.storage
    const counts: ConsumedCounts = {}
    const of = (id: string) => {
      counts[id] ??= { started: 0, completed: 0, failed: 0, messages: 0, deadLettered: 0, raw: null, payload: null }
      return counts[id]
    }
    for (const row of sql
      .exec<{ id: string; started: number; completed: number; failed: number; raw: string | null; payload: string | null }>(
        'SELECT * FROM runs',
      )
      .toArray()) {
      Object.assign(of(row.id), { started: row.started, completed: row.completed, failed: row.failed, raw: row.raw, payload: row.payload })
    }
    for (const row of sql.exec<{ id: string; n: number }>('SELECT id, COUNT(*) AS n FROM messages GROUP BY id').toArray()) {
      of(row.id).messages = row.n
    }
    for (const row of sql.exec<{ id: string; count: number }>('SELECT id, count FROM dead').toArray()) of(row.id).deadLettered = row.count
    return counts
  }

  #table(): void {
    if (this.#ready) return
    const { sql } = this.ctx.storage
    sql.exec(
      'CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, started INTEGER, completed INTEGER DEFAULT 0, failed INTEGER DEFAULT 0, raw TEXT, payload TEXT)',
    )
    sql.exec('CREATE TABLE IF NOT EXISTS messages (id TEXT, message TEXT, PRIMARY KEY (id, message))')
    sql.exec('CREATE TABLE IF NOT EXISTS dead (id TEXT PRIMARY KEY, count INTEGER)')
    this.#ready = true
  }
}

const ledgerOf = (env: Env) => env.LEDGER.getByName('ledger')

/** The delivery id a message carries: its job's payload id, or, for a message that is no job, the `poison` id the test gave it. */
function idOf(body: unknown): string {
  const job = body as { payload?: { id?: unknown }; poison?: unknown } | null
  return String(job?.payload?.id ?? job?.poison ?? 'unknown')
}

/** A queue producer binding whose every send fails, as a queue that cannot be reached. */
const unreachable = { send: async () => Promise.reject(new Error('Queue send failed: the queue cannot be reached')) }

function createApps(env: Env) {
  const auth = { mode: 'secret', secret: QUEUES_SECRET } as const
  const store = durableObjectDedupeStore(env.DEDUPE)
  // A look at the store holds a key for twice claimTimeout: short here, so that a consumer that meets one waits little.
  const dedupe = { store, claimTimeout: 1000 }
  const hono = new Hono<{ Bindings: Env }>()
    .post(
      '/hooks',
      honoWebhook<QueuedPayload>({ auth, maxBodySize: MAX_BODY_SIZE, dedupe, handoff: queueHandoff(env.WEBHOOKS, { store }) }),
    )
    .post('/steady/hooks', honoWebhook<QueuedPayload>({ auth, dedupe, handoff: queueHandoff(env.STEADY, { store }) }))
    .post('/unreachable', honoWebhook<QueuedPayload>({ auth, dedupe, handoff: queueHandoff(unreachable, { store }) }))
  // No store at the hand-off: every copy is a message, and the consumer's store runs each delivery once.
  const everyCopy = fetchWebhook<QueuedPayload>({ auth, maxBodySize: MAX_BODY_SIZE, handoff: queueHandoff(env.WEBHOOKS) }, () => {
    throw new Error('a hand-off never runs the route’s handler')
  })
  return { hono, everyCopy }
}

let apps: ReturnType<typeof createApps> | undefined

/** The consumer of the queue: throws on the first `fail` runs of a delivery, then records what it was handed. */
const consume = queueConsumer<QueuedPayload, Env, ExecutionContext>(
  async (delivery, env) => {
    const { id, fail, ms } = delivery.payload
    const ledger = ledgerOf(env)
    const run = await ledger.start(id)
    await sleep(ms)
    if (run <= fail) {
      await ledger.finish(id, false)
      throw new Error(`run ${run} of ${id} failed`)
    }
    await ledger.finish(id, true, new TextDecoder().decode(delivery.rawBody), JSON.stringify(delivery.payload))
  },
  // Short, so that a copy met while another consumer runs it is retried within the test's time.
  { store: (env) => durableObjectDedupeStore(env.DEDUPE), processingTtl: 2 },
)

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    apps ??= createApps(env)
    const url = new URL(request.url)
    switch (url.pathname) {
      case '/every-copy/hooks':
        return apps.everyCopy(request)
      case '/test/ledger':
        return Response.json(await ledgerOf(env).counts())
      case '/test/send-raw':
        // A message that is no hookguard job, sent straight to the queue.
        await env.WEBHOOKS.send(await request.json(), { contentType: 'json' })
        return new Response(null, { status: 204 })
      default:
        return apps.hono.fetch(request, env, ctx)
    }
  },

  async queue(batch: MessageBatch, env: Env, ctx: ExecutionContext): Promise<void> {
    const ledger = ledgerOf(env)
    if (batch.queue === DEAD_LETTER_QUEUE) {
      for (const message of batch.messages) {
        await ledger.deadLetter(idOf(message.body))
        message.ack()
      }
      return
    }
    for (const message of batch.messages) await ledger.seen(idOf(message.body), message.id)
    await consume(batch, env, ctx)
  },
}
