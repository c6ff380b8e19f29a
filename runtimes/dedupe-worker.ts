import { DurableObject } from 'cloudflare:workers'
import type { DurableObjectNamespace, ExecutionContext } from '@cloudflare/workers-types'
import { type DedupeNamespace, durableObjectDedupeStore, HookguardDedupe } from '@hookguard/cloudflare'
import { webhook as fetchWebhook } from '@hookguard/fetch'
import { webhook as honoWebhook } from '@hookguard/hono'
import { Hono } from 'hono'
import { DEDUPE_SECRET, HONO_SHARDS, type LedgerCounts, OPEN_MAX_ROWS, OPEN_SHARDS, type TestPayload } from './suite/dedupe.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const jitter = () => sleep(Math.random() * 15)

/**
 * The Worker that `dedupe-workerd.ts` runs in workerd, without `nodejs_compat`: a Hono app and a
 * fetch handler whose dedupe store is `durableObjectDedupeStore`, each handler recording its runs
 * in a ledger object, and a few routes under /test that let the driver look into the objects and
 * restart them. Built once per isolate, as the README tells users to.
 */

interface Env {
  DEDUPE: DurableObjectNamespace<TestDedupe>
  LEDGER: DurableObjectNamespace<Ledger>
  /** A class that is no RPC target: every call to it fails, as an unreachable object's would. */
  BROKEN: DurableObjectNamespace
  /** HookguardDedupe on the older key-value storage, where it has no SQL. */
  KV_DEDUPE: DurableObjectNamespace<KeyValueDedupe>
  /** The objects of the mode-`none` route, which anyone can add rows to: bounded by `maxRows`. */
  OPEN: DurableObjectNamespace<OpenDedupe>
}

/**
 * The package's object, sweeping often, with hooks to count its rows and to restart it. Each call
 * waits a few milliseconds before and after its work, as a call over the network would, so that a
 * restart meets calls in flight: some before they reach the table, some whose answer is lost.
 */
export class TestDedupe extends HookguardDedupe {
  static override sweepEvery = 100

  override async claim(key: string, ttlMs: number, maxRows?: number): ReturnType<HookguardDedupe['claim']> {
    await jitter()
    const found = await super.claim(key, ttlMs, maxRows)
    await jitter()
    return found
  }

  override async complete(key: string, ttlMs: number) {
    await jitter()
    await super.complete(key, ttlMs)
    await jitter()
  }

  override async release(key: string, token: string) {
    await jitter()
    await super.release(key, token)
    await jitter()
  }

  async rows(): Promise<{ rows: number; alarm: number | null }> {
    const { sql } = this.ctx.storage
    // An object no key was ever claimed in has no table yet.
    if (sql.exec("SELECT name FROM sqlite_master WHERE name = 'hookguard_dedupe'").toArray().length === 0) {
      return { rows: 0, alarm: await this.ctx.storage.getAlarm() }
    }
    const { rows } = this.ctx.storage.sql.exec<{ rows: number }>('SELECT COUNT(*) AS rows FROM hookguard_dedupe').one()
    return { rows, alarm: await this.ctx.storage.getAlarm() }
  }

  /** Resets the object as a deploy or a crash would: every call in flight fails, and the next finds a new instance. */
  restart(): void {
    this.ctx.abort('restarted by the test')
  }
}

export class KeyValueDedupe extends HookguardDedupe {}

/** The mode-`none` route's objects: a class of their own, since a class is one namespace, whatever binds it. */
export class OpenDedupe extends TestDedupe {}

export class NotRpc {
  fetch(): Response {
    return new Response('not an RPC target', { status: 500 })
  }
}

/** Every run of a handler, per delivery: started, completed (answered 2xx) and failed; in SQLite, so it outlives restarts. */
export class Ledger extends DurableObject {
  #ready = false

  start(id: string): number {
    this.#table()
    const sql = this.ctx.storage.sql
    sql.exec(
      'INSERT INTO runs (id, started, completed, failed) VALUES (?, 1, 0, 0) ON CONFLICT (id) DO UPDATE SET started = started + 1',
      id,
    )
    return sql.exec<{ started: number }>('SELECT started FROM runs WHERE id = ?', id).one().started
  }

  finish(id: string, ok: boolean): void {
    this.#table()
    this.ctx.storage.sql.exec(`UPDATE runs SET ${ok ? 'completed = completed + 1' : 'failed = failed + 1'} WHERE id = ?`, id)
  }

  counts(): LedgerCounts {
    this.#table()
    const rows = this.ctx.storage.sql
      .exec<{ id: string; started: number; completed: number; failed: number }>('SELECT * FROM runs')
      .toArray()
    return Object.fromEntries(rows.map(({ id, ...counts }) => [id, counts]))
  }

  #table(): void {
    if (this.#ready) return
    this.ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, started INTEGER, completed INTEGER, failed INTEGER)')
    this.#ready = true
  }
}

/** The delivery's handler: records its run, fails the first `fail` runs (answering 500 or throwing), then succeeds. */
async function handle(payload: TestPayload, env: Env): Promise<Response> {
  const ledger = env.LEDGER.getByName('ledger')
  const run = await ledger.start(payload.id)
  await sleep(payload.ms)
  if (run <= payload.fail) {
    await ledger.finish(payload.id, false)
    if (payload.throws) throw new Error(`run ${run} of ${payload.id} failed`)
    return Response.json({ failed: payload.id, run }, { status: 500 })
  }
  await ledger.finish(payload.id, true)
  return Response.json({ handled: payload.id, run })
}

/** Calls to the store's objects that failed, and how many of those the runtime marked retryable (or a reset). */
const failedCalls = { failed: 0, retryable: 0 }

/** `namespace` as the store sees it, counting the calls that fail (an object restarted under them). */
function counting(namespace: DurableObjectNamespace<TestDedupe>): DedupeNamespace {
  return {
    idFromName: (name) => namespace.idFromName(name),
    get(id) {
      const stub = namespace.get(id) as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
      const call =
        (method: string) =>
        (...args: unknown[]) =>
          (stub[method] as (...args: unknown[]) => Promise<unknown>)(...args).catch((error: unknown) => {
            failedCalls.failed++
            const flags = error as { retryable?: unknown; durableObjectReset?: unknown }
            if (flags.retryable === true || flags.durableObjectReset === true) failedCalls.retryable++
            throw error
          })
      return { claim: call('claim'), complete: call('complete'), release: call('release') }
    },
  }
}

function createApps(env: Env) {
  const auth = { mode: 'secret', secret: DEDUPE_SECRET } as const
  const store = durableObjectDedupeStore(counting(env.DEDUPE), { shards: HONO_SHARDS })
  // Short enough that a claim orphaned by a restart does not hold the test up for long.
  const dedupe = { store, processingTtl: 2, claimTimeout: 3000 }
  const hono = new Hono<{ Bindings: Env }>()
    // A handler's throw is expected here: answered 500 without a stack trace in the log.
    .onError((_error, c) => c.json({ failed: true }, 500))
    .post('/hono/hooks', honoWebhook<TestPayload>({ auth, dedupe }), (c) => handle(c.get('webhook').payload, c.env))
    // Done marks remembered for one second: the alarms delete them, and a delivery runs again.
    .post('/hono/short', honoWebhook<TestPayload>({ auth, dedupe: { ...dedupe, ttl: 1 } }), (c) => handle(c.get('webhook').payload, c.env))
    .post('/hono/broken', honoWebhook<TestPayload>({ auth, dedupe: { store: durableObjectDedupeStore(env.BROKEN) } }), (c) =>
      handle(c.get('webhook').payload, c.env),
    )
    // Mode `none`: any request is a delivery, and the store's maxRows is all that bounds its rows.
    .post(
      '/hono/open',
      honoWebhook<TestPayload>({
        auth: { mode: 'none' },
        dedupe: { ...dedupe, store: durableObjectDedupeStore(env.OPEN, { shards: OPEN_SHARDS, maxRows: OPEN_MAX_ROWS }) },
      }),
      (c) => handle(c.get('webhook').payload, c.env),
    )
    .post('/hono/kv', honoWebhook<TestPayload>({ auth, dedupe: { store: durableObjectDedupeStore(env.KV_DEDUPE) } }), (c) =>
      handle(c.get('webhook').payload, c.env),
    )
  // The fetch handler with the store's default of 16 shards.
  const fetchHandler = fetchWebhook<TestPayload, [Env]>(
    { auth, dedupe: { ...dedupe, store: durableObjectDedupeStore(env.DEDUPE) } },
    (delivery, _request, env) => handle(delivery.payload, env),
  )
  return { hono, fetchHandler }
}

let apps: ReturnType<typeof createApps> | undefined

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    apps ??= createApps(env)
    const url = new URL(request.url)
    switch (url.pathname) {
      case '/fetch/hooks':
        // The fetch handler rethrows a handler's error once it has released the claim; answered 500 here.
        return apps.fetchHandler(request, env).catch(() => Response.json({ failed: true }, { status: 500 }))
      case '/test/failed-calls':
        return Response.json(failedCalls)
      case '/test/ledger':
        return Response.json(await env.LEDGER.getByName('ledger').counts())
      case '/test/rows': {
        // Rows and alarm of each shard's object; shard names as the store makes them.
        const shards = Number(url.searchParams.get('shards'))
        const found = await Promise.all(
          Array.from({ length: shards }, async (_, shard) => {
            const { rows, alarm } = await env.DEDUPE.getByName(`hookguard-dedupe:${shard}`).rows()
            return { rows, alarm }
          }),
        )
        return Response.json(found)
      }
      case '/test/open-rows':
        return Response.json(
          await Promise.all(Array.from({ length: OPEN_SHARDS }, (_, shard) => env.OPEN.getByName(`hookguard-dedupe:${shard}`).rows())),
        )
      case '/test/restart': {
        const shards = Number(url.searchParams.get('shards'))
        const outcomes = await Promise.allSettled(
          Array.from({ length: shards }, (_, shard) => env.DEDUPE.getByName(`hookguard-dedupe:${shard}`).restart()),
        )
        return Response.json({ restarted: outcomes.filter((o) => o.status === 'rejected').length })
      }
      case '/test/kv-claim':
        try {
          await durableObjectDedupeStore(env.KV_DEDUPE).claim('k'.repeat(64), 1000)
          return Response.json({ error: null })
        } catch (error) {
          return Response.json({ error: String(error instanceof Error ? error.message : error) })
        }
      default:
        return apps.hono.fetch(request, env, ctx)
    }
  },
}
