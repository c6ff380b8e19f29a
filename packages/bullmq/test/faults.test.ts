import { type ChildProcess, fork } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { redisDedupeStore } from '@hookguard/redis'
import { sendTo } from '@hookguard/testkit/http'
import { type RedisServer, startRedis } from '@hookguard/testkit/redis-server'
import { Queue } from 'bullmq'
import { build, type Plugin } from 'esbuild'
import { Redis as IoRedis, type Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type DeadLetter, handoff } from '../src/index.ts'
import type { Instructions } from './fixtures/worker.ts'
import {
  closeQueue,
  deliverUntilAccepted,
  queueConnection,
  receiverApp,
  SECRET,
  signed,
  uniqueQueue,
  until,
  workerConnection,
} from './support.ts'

// The faults of issue 38, each counted per delivery: exactly one successful handler run, none
// lost. Workers (and, for the copies sent to three receivers, receivers) are processes of their
// own; each test has its own redis-server, so the tests run at once and are stopped, killed and
// restarted without touching each other.

/**
 * The two fixtures as plain JavaScript, built once for the file, so that each of the children is a
 * plain `node` start: through tsx's loader every one of them spent about twice the CPU time on its
 * start. The workspace's packages are bundled from their sources, as tsx ran them; the libraries
 * stay outside the bundle, loaded from where the fixtures import them.
 */
const BUILT = mkdtempSync(join(tmpdir(), 'hookguard-bullmq-'))
const WORKER = join(BUILT, 'worker.mjs')
const RECEIVER = join(BUILT, 'receiver.mjs')

const librariesOutside: Plugin = {
  name: 'libraries-outside',
  setup(on) {
    on.onResolve({ filter: /^[^./#]/ }, async (args) => {
      if (args.path.startsWith('@hookguard/') || args.pluginData === 'outside') return undefined
      const found = await on.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: 'outside' })
      if (found.errors.length > 0 || found.external) return { path: args.path, external: true }
      return { path: pathToFileURL(found.path).href, external: true }
    })
  },
}

beforeAll(async () => {
  const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}.ts`, import.meta.url))
  await build({
    entryPoints: { worker: fixture('worker'), receiver: fixture('receiver') },
    outdir: BUILT,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    conditions: ['@hookguard/source'],
    plugins: [librariesOutside],
    logLevel: 'error',
  })
})
/** Retries a few milliseconds apart: the tests count runs, not wait on backoff. */
const FAST_RETRIES = { backoff: { type: 'fixed', delay: 100 } } as const

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup().catch(() => {})))
  rmSync(BUILT, { recursive: true, force: true })
})

function child(script: string, args: string[]): Promise<{ process: ChildProcess; message: unknown }> {
  const spawned = fork(script, args, { execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  cleanups.push(async () => {
    spawned.kill('SIGKILL')
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start within 60 s`)), 60_000)
    spawned.once('message', (message) => {
      clearTimeout(timer)
      resolve({ process: spawned, message })
    })
    spawned.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${script} exited with ${code} before it was ready`))
    })
  })
}

interface Scenario {
  server: RedisServer
  jobs: Queue
  dead: Queue
  records: Redis
  /** Worker processes on this scenario's queue, holding each claim `processingTtl` seconds (default 2). */
  workers(count: number, processingTtl?: number): Promise<ChildProcess[]>
  /** Successful handler runs, by delivery id. */
  runs(): Promise<Record<string, number>>
  /** Handler attempts of one delivery. */
  attempts(id: string): Promise<number>
  /** Waits until every one of `ids` has run at least once. */
  allRan(ids: readonly string[], ms?: number): Promise<void>
}

async function scenario(options: { appendonly?: boolean } = {}): Promise<Scenario> {
  const server = await startRedis({ own: true, ...options })
  const name = `hooks-${randomUUID().slice(0, 8)}`
  const jobs = uniqueQueue(server.url, name)
  const dead = uniqueQueue(server.url, `${name}-dead`)
  const records = workerConnection(server.url)
  cleanups.push(async () => {
    await Promise.all([closeQueue(jobs), closeQueue(dead)])
    records.disconnect()
    await server.stop()
  })
  const runs = async () => {
    const counted: Record<string, number> = {}
    for (const run of await records.smembers(`${name}:runs`)) {
      const id = run.split(' ')[0] as string
      counted[id] = (counted[id] ?? 0) + 1
    }
    return counted
  }
  return {
    server,
    jobs,
    dead,
    records,
    workers: async (count, processingTtl = 2) =>
      (await Promise.all(Array.from({ length: count }, () => child(WORKER, [server.url, name, dead.name, String(processingTtl)])))).map(
        (started) => started.process,
      ),
    runs,
    attempts: async (id) => records.scard(`${name}:attempts:${id}`),
    async allRan(ids, ms = 45_000) {
      let missing: string[] = [...ids]
      await until(
        async () => {
          const counted = await runs()
          missing = ids.filter((id) => counted[id] === undefined)
          return missing.length === 0 ? true : undefined
        },
        `runs of ${ids.length} deliveries`,
        ms,
      ).catch(async (error: Error) => {
        throw new Error(`${error.message}: ${missing.join(' ')} never ran; jobs ${JSON.stringify(await jobs.getJobCounts())}`)
      })
    },
  }
}

const body = (data: Instructions['data']) => JSON.stringify({ event: 'order.paid', data } satisfies Instructions)
const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, at) => `${prefix}-${at}`)
const once = (list: readonly string[]) => Object.fromEntries(list.map((id) => [id, 1]))

async function receiverIn(scene: Scenario, extra: { store?: boolean; timeout?: number } = {}) {
  const connection = queueConnection(scene.server.url)
  const app = await receiverApp({
    auth: { mode: 'secret', secret: SECRET },
    handoff: handoff(scene.jobs, { jobOptions: FAST_RETRIES, ...(extra.timeout && { timeout: extra.timeout }) }),
    ...(extra.store && { dedupe: { store: redisDedupeStore(connection, { prefix: `${scene.jobs.name}:dedupe:` }) } }),
  })
  cleanups.push(async () => {
    await app.close()
    connection.disconnect()
  })
  return app
}

// Bounds for a machine shared with other work: a worker process takes seconds to start there.
describe.concurrent('the hand-off on BullMQ under faults, with worker processes', { timeout: 120_000 }, () => {
  it('a worker killed with SIGKILL mid-job: the job stalls and another worker runs it, once', async () => {
    const scene = await scenario()
    const [first, second] = await scene.workers(2)
    const receiver = await receiverIn(scene)
    const slow = 'slow-0'
    const others = ids('kill', 5)
    expect((await receiver.send(await signed(body({ id: slow, sleepMs: 30_000 })))).status).toBe(202)
    for (const id of others) expect((await receiver.send(await signed(body({ id })))).status).toBe(202)
    const started = await until(async () => (await scene.records.lrange(`${scene.jobs.name}:started`, 0, -1))[0], 'the slow job to start')
    const pid = Number(started.split(' ')[1])
    const victim = [first, second].find((worker) => worker?.pid === pid)
    expect(victim).toBeDefined()
    victim?.kill('SIGKILL')
    await scene.allRan([slow, ...others])
    expect(await scene.runs()).toEqual(once([slow, ...others]))
    // Its first attempt died with the worker; the second, on the other worker, ran it.
    expect(await scene.attempts(slow)).toBe(2)
    // A handler's run is recorded before BullMQ moves its job to completed (after the handler
    // returns and the store marks it done): on a busy machine the last job can be read in between.
    const all = [slow, ...others].sort()
    const completed = await until(async () => {
      const finished = (await scene.jobs.getJobs(['completed'])).map((job) => job.data.payload.data.id).sort()
      return finished.length >= all.length ? finished : undefined
    }, 'every job to complete')
    expect(completed).toEqual(all)
  })

  it('a worker killed after the store marked its delivery done, before BullMQ heard: the job runs again and the handler does not', async () => {
    const scene = await scenario()
    const workers = await scene.workers(2)
    const receiver = await receiverIn(scene)
    const others = ids('after', 4)
    const { jobId } = JSON.parse((await receiver.send(await signed(body({ id: 'done-then-killed', dieAfterDone: true })))).text) as {
      jobId: string
    }
    for (const id of others) expect((await receiver.send(await signed(body({ id })))).status).toBe(202)
    await scene.allRan(['done-then-killed', ...others])
    // One of the two died; its job, stalled, was run again by the other, which found it done.
    const job = await until(async () => {
      const found = await scene.jobs.getJob(jobId)
      return found?.finishedOn ? found : undefined
    }, 'the job to finish again')
    expect(workers.filter((worker) => worker.exitCode !== null || worker.signalCode !== null)).toHaveLength(1)
    expect(job.returnvalue).toEqual({ ran: false, reason: 'done' })
    expect(await scene.runs()).toEqual(once(['done-then-killed', ...others]))
    expect(await scene.attempts('done-then-killed')).toBe(1)
  })

  it('Redis stopped for two seconds while deliveries arrive: 503s, then the sender’s retries land once each', async () => {
    const scene = await scenario({ appendonly: true })
    // Claims that outlast the outage: a claim that expired while Redis was away would let a second
    // worker run a delivery whose first run is still settling, which processingTtl is the bound of.
    await scene.workers(2, 30)
    // One receiver looks at the dedupe store first (its outage answer is store_unavailable), one has none (queue_unavailable).
    const receivers = [await receiverIn(scene, { store: true, timeout: 1_000 }), await receiverIn(scene, { timeout: 1_000 })]
    const list = ids('outage', 20)
    const sending = list.map(async (id, at) => {
      await new Promise((resolve) => setTimeout(resolve, at * 100))
      const receiver = receivers[at % 2] as (typeof receivers)[number]
      return deliverUntilAccepted(async () => receiver.send(await signed(body({ id }))), 80, 100)
    })
    await new Promise((resolve) => setTimeout(resolve, 500))
    // Killed, two seconds away, then back with what its append-only file held.
    await scene.server.restart(2_000)
    const replies = (await Promise.all(sending)).flat()
    const answered = replies.map((reply) =>
      reply.status < 300 ? '2xx' : `${reply.status} ${(JSON.parse(reply.text) as { error?: string }).error}`,
    )
    // 503 while Redis is away; 409 for at most the store's claimTimeout after it returns, where a
    // look's claim was taken just before it went and could not be given back.
    for (const answer of answered)
      expect(['2xx', '503 queue_unavailable', '503 store_unavailable', '409 duplicate_in_progress']).toContain(answer)
    expect(answered).toContain('503 queue_unavailable')
    expect(answered).toContain('503 store_unavailable')
    await scene.allRan(list)
    expect(await scene.runs()).toEqual(once(list))
  })

  it('Redis away longer than the store retries a done mark, right after the handler’s work: marked done once it is back, the handler run once', async () => {
    const scene = await scenario({ appendonly: true })
    await scene.workers(2, 30)
    const receiver = await receiverIn(scene)
    const sent = await receiver.send(await signed(body({ id: 'done-in-outage', doneInOutage: true })))
    expect(sent.status).toBe(202)
    const { jobId } = JSON.parse(sent.text) as { jobId: string }
    await until(async () => (await scene.records.lrange(`${scene.jobs.name}:awaiting-done`, 0, -1))[0], 'the handler’s work')
    // Longer than the store's own retries of a settle (SETTLE_WITHIN_MS, 3 s), well within the claim's 30 s.
    await scene.server.restart(5_000)
    await until(
      async () => ((await scene.jobs.getJob(jobId))?.finishedOn ? true : undefined),
      'the job to finish, within the claim’s life',
      20_000,
    )
    expect(await scene.runs()).toEqual(once(['done-in-outage']))
    expect(await scene.attempts('done-in-outage')).toBe(1)
  })

  it('Redis away, over a connection that would hold commands offline: 503 queue_unavailable at once, nothing queued behind it', async () => {
    const scene = await scenario()
    // ioredis's defaults: a command sent while disconnected waits in its offline queue.
    const connection = new IoRedis(scene.server.url, { maxRetriesPerRequest: null })
    connection.on('error', () => {})
    const jobs = new Queue(scene.jobs.name, { connection })
    jobs.on('error', () => {})
    cleanups.push(() => closeQueue(jobs))
    await jobs.waitUntilReady()
    const receiver = await receiverApp({ auth: { mode: 'secret', secret: SECRET }, handoff: handoff(jobs) })
    cleanups.push(() => receiver.close())
    // Away for six seconds: an answer held until Redis returns is told from one given at once by
    // when it comes, not by a time it must keep, which a busy machine stretched past three seconds.
    const back = scene.server.restart(6_000)
    let returned = false
    void back.then(
      () => {
        returned = true
      },
      () => {},
    )
    await until(async () => (connection.status !== 'ready' ? true : undefined), 'the connection to drop')
    const reply = await receiver.send(await signed(body({ id: 'offline' })))
    // Held in the offline queue, the job would have been written once Redis returned, and answered 202.
    expect([reply.status, JSON.parse(reply.text).error, reply.headers['retry-after']]).toEqual([503, 'queue_unavailable', '5'])
    expect(returned, 'answered only once Redis was back').toBe(false)
    await back
    const replies = await deliverUntilAccepted(async () => receiver.send(await signed(body({ id: 'offline' }))))
    expect(replies.at(-1)?.status).toBe(202)
    // The refused attempt left nothing queued behind it.
    expect(await jobs.getJobCounts('waiting')).toEqual({ waiting: 1 })
  })

  it('Redis killed and restarted with its append-only file: every delivery answered 202 before is run after, once', async () => {
    const scene = await scenario({ appendonly: true })
    const receiver = await receiverIn(scene)
    const list = ids('aof', 10)
    for (const id of list) expect((await receiver.send(await signed(body({ id })))).status).toBe(202)
    // SIGKILL: no shutdown save, only what the append-only file held when each job was answered.
    await scene.server.restart()
    await scene.workers(2)
    await scene.allRan(list)
    expect(await scene.runs()).toEqual(once(list))
  })

  it('the same deliveries sent to three receiver processes at once: one job and one run each', async () => {
    const scene = await scenario()
    const receivers = await Promise.all(
      [1, 2, 3].map(async () => (await child(RECEIVER, [scene.server.url, scene.jobs.name, SECRET])).message as { port: number }),
    )
    await scene.workers(2)
    const list = ids('copies', 10)
    const finals = await Promise.all(
      list.map(async (id) => {
        const request = await signed(body({ id }))
        // Copies of one delivery at once; one still told to wait (409) tries again, as the service does.
        const answers = await Promise.all(receivers.map(({ port }) => deliverUntilAccepted(() => sendTo(port, request), 40, 50)))
        return answers.map((replies) => replies.at(-1)?.status)
      }),
    )
    // One receiver's enqueue added each job (202); the other copies were answered as duplicates (200).
    for (const statuses of finals) expect(statuses.sort()).toEqual([200, 200, 202])
    await scene.allRan(list)
    expect(await scene.runs()).toEqual(once(list))
    // A handler's run is recorded before BullMQ marks its job completed: wait for the marks, then count them.
    const completed = await until(async () => {
      const count = (await scene.jobs.getJobCounts('completed')).completed ?? 0
      return count >= list.length ? count : undefined
    }, 'every job completed')
    expect(completed).toBe(list.length)
  })

  it('a handler that fails twice then succeeds: one success after three attempts, the others once', async () => {
    const scene = await scenario()
    await scene.workers(2)
    const receiver = await receiverIn(scene)
    const others = ids('steady', 5)
    expect((await receiver.send(await signed(body({ id: 'flaky', failTimes: 2 })))).status).toBe(202)
    for (const id of others) expect((await receiver.send(await signed(body({ id })))).status).toBe(202)
    await scene.allRan(['flaky', ...others])
    expect(await scene.runs()).toEqual(once(['flaky', ...others]))
    expect(await scene.attempts('flaky')).toBe(3)
    const flaky = await until(
      async () => (await scene.jobs.getJobs(['completed'])).find((job) => job.data.payload.data.id === 'flaky'),
      'the flaky job completed',
    )
    expect(flaky?.attemptsMade).toBe(3)
    expect(await scene.dead.count()).toBe(0)
  })

  it('a poison message that always fails: dead-lettered after its last attempt, failed on its queue, the others run once', async () => {
    const scene = await scenario()
    await scene.workers(2)
    const receiver = await receiverIn(scene)
    const others = ids('healthy', 5)
    const [poison] = (
      await Promise.all([
        receiver.send(await signed(body({ id: 'poison', poison: true }))),
        ...others.map(async (id) => receiver.send(await signed(body({ id })))),
      ])
    ).map((reply) => JSON.parse(reply.text) as { jobId: string })
    await scene.allRan(others)
    const letter = await until(async () => (await scene.dead.getJobs(['waiting']))[0], 'the dead letter')
    expect(letter.name).toBe('order.paid')
    expect(letter.data as DeadLetter).toMatchObject({
      jobId: poison?.jobId,
      queue: scene.jobs.name,
      attempts: 5,
      error: 'poison poison refused on attempt 5',
    })
    expect(await scene.attempts('poison')).toBe(5)
    // The dead letter is written during the last attempt, before BullMQ moves the job to failed. The
    // job is read once its state is failed, which it never leaves: read first, it could be the
    // active job's, one attempt short, with the move landing between the two reads.
    const failed = await until(async () => {
      const id = poison?.jobId ?? ''
      return (await scene.jobs.getJobState(id)) === 'failed' ? await scene.jobs.getJob(id) : undefined
    }, 'the poison job failed on its queue')
    expect(failed?.attemptsMade).toBe(5)
    expect(await scene.runs()).toEqual(once(others))
    expect(await scene.dead.count()).toBe(1)
  })
})
