/**
 * "Each delivery once", as a property: a schedule of sender attempts (some dropped mid-request),
 * handler runs that succeed, refuse, throw or take long, and a store that fails or stalls on some
 * calls, played against a real server; then the invariants are checked per delivery. Shared by the
 * in-memory run (test/conformance) and the Redis one (packages/redis/test).
 */
import { createHash } from 'node:crypto'
import http from 'node:http'
import { type ClaimResult, type DedupeStore, sign, type WebhookOptions } from '@hookguard/core'
import fc from 'fast-check'
import { startServed } from '../robustness/support/listening.ts'
import type { AppFactory } from './apps.ts'

export const SECRET = 'whsec-each-delivery-once-7d41'
/** How long an attempt that waits for its answer may wait before it counts as stalled. */
export const ANSWER_BOUND_MS = 5_000
/** The receiver's bound on a claim, short so that a stalled store costs the schedule little. */
export const CLAIM_TIMEOUT_MS = 300
/** How long a play may go on before it says where it is (about 2 s each on an idle machine). */
const STILL_PLAYING_MS = 60_000
/** Retries of the sender after the schedule, each until a 2xx. */
const RETRIES = 20

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** One send of a delivery: after `gapMs`, it waits for the answer, or drops the connection after `dropAfterMs`. */
export interface Attempt {
  gapMs: number
  dropAfterMs: number | undefined
}

/** What one run of the handler does: answers `status` after `ms`, or throws after `ms`. */
export type Outcome = { kind: 'answer'; status: number; ms: number } | { kind: 'throw'; ms: number }

/**
 * What the store does on one claim of a delivery's key, and on the settling of the claim it gave:
 * `reject` fails the call without reaching the store; `stall` never answers; `late` claims in the
 * store but answers after the receiver's bound; `lost` settles in the store, then fails (the reply
 * was lost).
 */
export interface Fault {
  claim: 'ok' | 'reject' | 'stall' | 'late'
  settle: 'ok' | 'reject' | 'lost'
}

/** One delivery: the sender's attempts, the outcomes of its handler runs in turn (then 200 at once), the store's faults on its claims in turn (then none). */
export interface DeliveryPlan {
  attempts: Attempt[]
  outcomes: Outcome[]
  faults: Fault[]
}

export interface Schedule {
  deliveries: DeliveryPlan[]
}

/** Handler times: `slowMs` adds runs that last that long (past a 1 s processingTtl in the second property). */
export function scheduleArb({ slowMs }: { slowMs?: [number, number] } = {}): fc.Arbitrary<Schedule> {
  const ms =
    slowMs === undefined
      ? fc.integer({ min: 0, max: 200 })
      : fc.oneof(fc.integer({ min: 0, max: 200 }), fc.integer({ min: slowMs[0], max: slowMs[1] }))
  const outcome: fc.Arbitrary<Outcome> = fc.oneof(
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('answer' as const), status: fc.constantFrom(200, 201, 202), ms }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('answer' as const), status: fc.constantFrom(400, 404, 422, 500, 503), ms }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('throw' as const), ms }) },
  )
  const attempt: fc.Arbitrary<Attempt> = fc.record({
    gapMs: fc.integer({ min: 0, max: 120 }),
    dropAfterMs: fc.option(fc.integer({ min: 0, max: 250 }), { nil: undefined, freq: 2 }),
  })
  const fault: fc.Arbitrary<Fault> = fc.record({
    claim: fc.constantFrom('ok', 'ok', 'ok', 'reject', 'stall', 'late'),
    settle: fc.constantFrom('ok', 'ok', 'ok', 'reject', 'lost'),
  })
  const delivery = fc.record({
    attempts: fc.array(attempt, { minLength: 1, maxLength: 4 }),
    outcomes: fc.array(outcome, { maxLength: 4 }),
    faults: fc.array(fault, { maxLength: 4 }),
  })
  return fc.record({ deliveries: fc.array(delivery, { minLength: 1, maxLength: 3 }) })
}

/**
 * fast-check's settings for a property over schedules: `numRuns` drawn from `seed`, and a failure
 * ends the run rather than shrinking. Each shrink replays a schedule in real time, seconds apiece,
 * so a failure went on past the test's timeout and read only "timed out"; the invariant's message
 * (which delivery, its runs and its replies) and the seed say what a shrink would.
 */
export function scheduleRuns(numRuns: number, seed: number): fc.Parameters<[Schedule]> {
  return { numRuns, seed, endOnFailure: true }
}

/** A handler run, in `performance.now()` milliseconds. */
export interface Run {
  start: number
  /** When the claim this run holds was sent to the store: its processingTtl runs from no earlier. */
  claimSent: number
  end: number | undefined
  /** The status it answered, or `'threw'`. */
  answered: number | 'threw' | undefined
}

/** A reply to an attempt that waited, or what became of it. */
export type Sent = { status: number; retryAfter: string | undefined } | { dropped: true } | { stalled: true } | { failed: string }

/** A signed delivery's request to `/hooks`, on a connection of its own; the caller writes the body. */
export function deliveryRequest(port: number, signature: string): http.ClientRequest {
  return http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/hooks',
    headers: { 'content-type': 'application/json', 'x-service-hmac-signature': signature },
    agent: false,
  })
}

/** Sends `body` once on a connection of its own; drops it after `dropAfterMs`, or waits up to {@link ANSWER_BOUND_MS}. */
export function send(port: number, body: string, signature: string, dropAfterMs: number | undefined): Promise<Sent> {
  return new Promise((resolve) => {
    let done = false
    const finish = (sent: Sent) => {
      if (done) return
      done = true
      clearTimeout(timer)
      resolve(sent)
    }
    const request = deliveryRequest(port, signature)
    request.on('error', (error) => finish(dropAfterMs === undefined ? { failed: error.message } : { dropped: true }))
    request.on('response', (res) => {
      res.resume()
      const retryAfter = res.headers['retry-after']
      res.on('end', () => finish({ status: res.statusCode ?? 0, retryAfter }))
      res.on('error', () => finish(dropAfterMs === undefined ? { failed: 'answer cut off' } : { dropped: true }))
    })
    request.end(body)
    const timer = setTimeout(() => {
      request.destroy()
      finish(dropAfterMs === undefined ? { stalled: true } : { dropped: true })
    }, dropAfterMs ?? ANSWER_BOUND_MS)
  })
}

/** Per key: what the faulty store did, for the invariants' stated exceptions. */
interface StoreLog {
  completeFailed: boolean
  /** When each claim the store granted was sent to it, in the order granted. */
  claimsSent: number[]
}

/**
 * `inner` with the plan's faults: the i-th claim of a delivery's key meets its i-th fault. Keys are
 * told apart by the fingerprint they end with (the default key is the fingerprint, scoped).
 */
function faultyStore(
  inner: DedupeStore,
  planOf: (key: string) => { faults: Fault[]; log: StoreLog } | undefined,
  pending: Set<Promise<unknown>>,
): DedupeStore {
  const claimsOf = new Map<string, number>()
  const track = <T>(promise: Promise<T>): Promise<T> => {
    pending.add(promise)
    void promise.then(
      () => pending.delete(promise),
      () => pending.delete(promise),
    )
    return promise
  }
  return {
    claim(key, ttlMs) {
      const plan = planOf(key)
      const index = claimsOf.get(key) ?? 0
      claimsOf.set(key, index + 1)
      const fault = plan?.faults[index] ?? { claim: 'ok', settle: 'ok' }
      const sent = performance.now()
      const granted = (found: ClaimResult): ClaimResult => {
        if (found.state === 'claimed') plan?.log.claimsSent.push(sent)
        return found
      }
      const wrap = (found: ClaimResult): ClaimResult => {
        if (found.state !== 'claimed') return found
        const settle = (op: () => Promise<void>, completing: boolean) => async () => {
          if (fault.settle === 'reject') {
            if (completing && plan) plan.log.completeFailed = true
            throw new Error('store unreachable (injected)')
          }
          await op()
          if (fault.settle === 'lost') throw new Error('reply lost (injected)')
        }
        const { claim } = found
        return {
          state: 'claimed',
          claim: {
            complete: (ttl?: number) => track(settle(() => claim.complete(ttl), true)()),
            release: () => track(settle(() => claim.release(), false)()),
          },
        }
      }
      switch (fault.claim) {
        case 'reject':
          return Promise.reject(new Error('store unreachable (injected)'))
        case 'stall':
          return new Promise(() => {})
        case 'late':
          return track(
            inner.claim(key, ttlMs).then(async (found) => {
              granted(found)
              await sleep(CLAIM_TIMEOUT_MS + 100)
              return wrap(found)
            }),
          )
        default:
          return inner.claim(key, ttlMs).then((found) => wrap(granted(found)))
      }
    },
  }
}

export interface PlayOptions {
  processingTtl: number
  /** A store of this run's own (a fresh one, or a new Redis prefix). */
  store: DedupeStore
}

/**
 * Plays `schedule` against `factory`'s app on a socket, then retries each delivery as a patient
 * sender would, and checks every invariant; throws an `Error` that says which one failed.
 */
export async function play(factory: AppFactory, schedule: Schedule, options: PlayOptions): Promise<void> {
  const started = performance.now()
  const where: Whereabouts = { phase: 'signing the deliveries', active: 0, pending: 0, replies: [] }
  // A play takes a few seconds; one held far past that by something unbounded would otherwise end
  // in a bare timeout of the whole property. Written where a test's console may be silenced.
  const watchdog = setInterval(() => {
    const seconds = ((performance.now() - started) / 1000).toFixed(0)
    process.stderr.write(`dedupe schedule on ${factory.name}, ${seconds} s in: ${JSON.stringify(where)}\n`)
  }, STILL_PLAYING_MS)
  watchdog.unref()
  try {
    await playWatched(factory, schedule, options, started, where)
  } finally {
    clearInterval(watchdog)
  }
}

/** Where a play is: its step, the handler runs going on, the store's answers awaited, each delivery's replies so far. */
interface Whereabouts {
  phase: string
  active: number
  pending: number
  replies: Sent[][]
}

async function playWatched(
  factory: AppFactory,
  schedule: Schedule,
  { processingTtl, store }: PlayOptions,
  started: number,
  where: Whereabouts,
): Promise<void> {
  const deliveries = await Promise.all(
    schedule.deliveries.map(async (plan, index) => {
      const body = JSON.stringify({ event: 'order.paid', data: { id: `SO-${index}-${started}`, amount: 12.5 } })
      return {
        plan,
        id: `SO-${index}-${started}`,
        body,
        signature: await sign(body, SECRET),
        // Mode secret: the SHA-256 of the canonical text, which for a body without whitespace is the body.
        fingerprint: createHash('sha256').update(body).digest('hex'),
        runs: [] as Run[],
        replies: [] as Sent[],
        log: { completeFailed: false, claimsSent: [] } as StoreLog,
      }
    }),
  )
  const byId = new Map(deliveries.map((delivery) => [delivery.id, delivery]))
  const pending = new Set<Promise<unknown>>()
  const faulty = faultyStore(
    store,
    (key) => {
      const delivery = deliveries.find((d) => key.endsWith(d.fingerprint))
      return delivery && { faults: delivery.plan.faults, log: delivery.log }
    },
    pending,
  )
  const options: WebhookOptions = {
    auth: { mode: 'secret', secret: SECRET },
    dedupe: { store: faulty, processingTtl, claimTimeout: CLAIM_TIMEOUT_MS },
  }
  where.replies = deliveries.map((delivery) => delivery.replies)
  where.phase = 'starting the app'
  const app = await startServed(factory, options, {
    async work(received) {
      const id = (received.payload as { data: { id: string } }).data.id
      const delivery = byId.get(id)
      if (delivery === undefined) throw new Error(`a run of an unknown delivery ${id}`)
      const outcome = delivery.plan.outcomes[delivery.runs.length] ?? { kind: 'answer', status: 200, ms: 0 }
      // The claim granted last is the one this run holds: another is granted only once it is gone.
      const claimSent = delivery.log.claimsSent.at(-1) ?? Number.NaN
      const run: Run = { start: performance.now(), claimSent, end: undefined, answered: undefined }
      delivery.runs.push(run)
      where.active++
      try {
        await sleep(outcome.ms)
      } finally {
        where.active--
        run.end = performance.now()
        run.answered = outcome.kind === 'throw' ? 'threw' : outcome.status
      }
      if (outcome.kind === 'throw') throw new Error('the handler failed (injected)')
      return outcome.status
    },
  })
  try {
    const { port } = app
    if (port === undefined) throw new Error(`${factory.name} does not listen on a port`)
    where.phase = 'the schedule'
    // The schedule: each sender's attempts one after another, the senders side by side.
    await Promise.all(
      deliveries.map(async (delivery) => {
        for (const attempt of delivery.plan.attempts) {
          await sleep(attempt.gapMs)
          delivery.replies.push(await send(port, delivery.body, delivery.signature, attempt.dropAfterMs))
        }
      }),
    )
    where.phase = 'the patient sender'
    // A patient sender: retries until a 2xx, honouring Retry-After scaled down (1 s → 100 ms).
    await Promise.all(
      deliveries.map(async (delivery) => {
        for (let retry = 0; retry < RETRIES; retry++) {
          const sent = await send(port, delivery.body, delivery.signature, undefined)
          delivery.replies.push(sent)
          if ('status' in sent && sent.status < 300) return
          const seconds = 'retryAfter' in sent ? Number(sent.retryAfter) : Number.NaN
          await sleep(Number.isFinite(seconds) ? Math.min(Math.max(seconds * 100, 25), 250) : 50)
        }
      }),
    )
    // Runs whose senders left still go on, and late store answers still come: wait for them.
    where.phase = 'waiting for runs and the store'
    const quiet = performance.now() + 10_000
    while ((where.active > 0 || pending.size > 0) && performance.now() < quiet) {
      where.pending = pending.size
      await sleep(20)
    }
    await sleep(30)
  } finally {
    where.phase = 'closing the app'
    await app.close()
  }
  for (const [index, delivery] of deliveries.entries()) check(index, delivery, processingTtl)
}

/** Slack for a run's `done` mark on its way to the store after the run ended. */
const SLACK_MS = 100
/**
 * How far short of processingTtl, by `performance.now()`, a store may grant the next claim. The
 * stores keep time in whole milliseconds of the wall clock (`Date.now()`, Redis's `mstime`): a claim
 * granted 1 000 of their milliseconds after the first can be 999.1 of ours, and the wall clock may
 * be slewed against ours by a fraction of a millisecond a second besides.
 */
const CLOCK_GRAIN_MS = 2

/**
 * The invariants over one delivery's runs and replies; throws naming the one broken, with the
 * delivery's timeline.
 */
export function check(
  index: number,
  delivery: { runs: Run[]; replies: Sent[]; log: Pick<StoreLog, 'completeFailed'> },
  processingTtl: number,
): void {
  const { runs, replies, log } = delivery
  const fail = (what: string) => {
    const timeline = runs
      .map((run) => `[${run.start.toFixed(0)}–${run.end?.toFixed(0)}: ${run.answered}, claim sent ${run.claimSent.toFixed(0)}]`)
      .join(' ')
    throw new Error(`delivery ${index}: ${what}\n  runs: ${timeline}\n  replies: ${JSON.stringify(replies)}`)
  }
  // 4. Every attempt that waited got an answer within the bound.
  for (const reply of replies) {
    if ('stalled' in reply) fail(`an attempt that waited had no answer within ${ANSWER_BOUND_MS} ms`)
    if ('failed' in reply) fail(`an attempt that waited lost its connection: ${reply.failed}`)
  }
  for (const [i, run] of runs.entries()) {
    if (run.end === undefined) fail(`run ${i} never ended`)
    for (const later of runs.slice(i + 1)) {
      // 1. No two runs overlap, except after the first outlived processingTtl: its claim expired,
      // and by design the sender's retry then runs again (a holder that died must not block the
      // delivery for good). Judged from when the first claim was sent, not when its run began: on
      // a loaded machine the two were 124 ms apart and more, past any fixed slack.
      const expired = later.start - run.claimSent >= processingTtl * 1000 - CLOCK_GRAIN_MS
      if (later.start < (run.end ?? Number.POSITIVE_INFINITY) && !expired) fail(`two runs overlap within processingTtl`)
      // 2. Nothing runs after a run that answered below 400, except when the store failed to record
      // it as done (complete rejected: reported on the console, and the claim expires with
      // processingTtl, after which the retry runs again). A run that outlived processingTtl is
      // recorded as done over a newer claim too; only while its completion is on its way (the
      // slack) may the newer run's release let one more in.
      const succeeded = typeof run.answered === 'number' && run.answered < 400
      const outlived = (run.end ?? 0) - run.claimSent >= processingTtl * 1000 - CLOCK_GRAIN_MS
      if (succeeded && later.start >= (run.end ?? 0) + (outlived ? SLACK_MS : 0) && !log.completeFailed) {
        fail(`a run started after run ${i} had answered ${run.answered}`)
      }
    }
  }
  // 3. Liveness: the patient sender got it handled.
  if (!runs.some((run) => typeof run.answered === 'number' && run.answered < 400)) fail('no run answered below 400')
  const last = replies.at(-1)
  if (last === undefined || !('status' in last) || last.status >= 300) fail(`the patient sender never got a 2xx`)
}
