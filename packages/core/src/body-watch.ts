import type { TimeBounds } from './drain.ts'

// Every body read is watched (drain.ts says why), so the watch's cost is paid by every delivery. A
// timer of its own per body, armed when reading begins and cleared at its end, is more than the
// calls cost in a loop: over HTTP, the same server with and without it side by side (bench/http.ts,
// docs/benchmarks.md), Koa's requests took 4 to 13 % more CPU with it. So where a timer belongs to
// the process (Node, Bun) the watches share one, armed for the first moment any of them can be due:
// a body costs a set entry and a clock read per chunk, and the timer runs about once per bound
// (within 2 % of no watch at all; 1 to 6 % cheaper than a timer per body on Koa, Express and Hono).
// Deno's timer is a bare number, but the process's too, told not to hold the process open by
// `Deno.unrefTimer`; there a timer armed and cleared costs 4 to 7 µs, several times Node's, so the
// watches share one there as well. Where a timer belongs to the request that armed it (Workers: it
// may not outlive that request, nor touch another request's stream), each watch keeps its own.

/** A watch over one body being read. */
export interface BodyWatch {
  /** A byte arrived: the idle time counts from now. */
  arrived(): void
  /** Reading is over: `stop` is never called. Harmless more than once. */
  cancel(): void
}

/** Watches a body: calls `stop` once `bounds.ms` have passed since now, or `bounds.idleMs` since the last byte. */
export type BodyWatcher = (bounds: TimeBounds, stop: () => void) => BodyWatch

let chosen: BodyWatcher | undefined

/** The watcher for this runtime: chosen once, by what its timers are. */
export const watchBody: BodyWatcher = (bounds, stop) => {
  if (chosen === undefined) {
    const release = processTimerRelease()
    chosen = release === undefined ? ownTimerWatch : sharedTimerWatcher(LATE_MS, release)
  }
  return chosen(bounds, stop)
}

type Timer = ReturnType<typeof setTimeout>

/** Tells a timer not to keep the process alive. */
export type TimerRelease = (timer: Timer) => void

const unref: TimerRelease = (timer) => (timer as { unref?: () => void }).unref?.()

/**
 * How to tell a timer not to keep the process alive, where a timer is the process's: an object's
 * own `unref` (Node, Bun), or the runtime's call for a numbered one (Deno). `undefined` where a
 * timer is neither (workerd's numbers belong to the request).
 */
export function processTimerRelease(): TimerRelease | undefined {
  const probe: unknown = setTimeout(() => {}, 0)
  clearTimeout(probe as Timer)
  if (typeof probe === 'object' && probe !== null && typeof (probe as { unref?: unknown }).unref === 'function') return unref
  const deno = (globalThis as { Deno?: { unrefTimer?: unknown } }).Deno
  const unrefTimer = deno?.unrefTimer
  if (typeof probe === 'number' && typeof unrefTimer === 'function') return (timer) => unrefTimer.call(deno, timer)
  return undefined
}

interface Watched {
  readonly deadline: number
  readonly idleMs: number
  last: number
  readonly stop: () => void
}

const dueAt = (watched: Watched) => Math.min(watched.deadline, watched.last + watched.idleMs)

/**
 * A timer due this long ago and not yet run is not trusted to run: a clock replaced (fake timers in
 * a test, removed) leaves one that never will, and the next watch arms another, due at once, so
 * that what was due is not put off to the new body's moment. A loaded event loop runs a timer a few
 * milliseconds late, well within it; one held for longer (a handler's synchronous work) gets the
 * same new timer, harmlessly. (A clock put forward leaves one due later than any new watch, which
 * arms another for that reason.)
 */
const LATE_MS = 1_000

/**
 * Watches that share one timer, released by `release` so that it never keeps the process alive: a
 * new watcher for each set of watches (each test, with fake timers). `lateMs` is for the library's
 * own tests.
 */
export function sharedTimerWatcher(lateMs = LATE_MS, release: TimerRelease = unref): BodyWatcher {
  const watching = new Set<Watched>()
  let timer: Timer | undefined
  let timerAt = 0

  const arm = (at: number, now: number) => {
    clearTimeout(timer)
    const armed = setTimeout(
      () => {
        if (timer === armed) sweep()
      },
      Math.max(0, at - now),
    )
    release(armed)
    timer = armed
    timerAt = at
  }

  const sweep = () => {
    timer = undefined
    const now = Date.now()
    const due: Watched[] = []
    let next = Number.POSITIVE_INFINITY
    for (const watched of watching) {
      const at = dueAt(watched)
      if (at <= now) due.push(watched)
      else next = Math.min(next, at)
    }
    for (const watched of due) watching.delete(watched)
    // Armed before any `stop` runs: a stop may begin another watch, which arms it sooner if it is due sooner.
    if (next !== Number.POSITIVE_INFINITY) arm(next, now)
    for (const watched of due) watched.stop()
  }

  return (bounds, stop) => {
    const now = Date.now()
    const watched: Watched = { deadline: now + bounds.ms, idleMs: bounds.idleMs, last: now, stop }
    watching.add(watched)
    const at = dueAt(watched)
    if (timer === undefined || at < timerAt) arm(at, now)
    else if (now - timerAt > lateMs) arm(now, now)
    return {
      arrived() {
        watched.last = Date.now()
      },
      cancel() {
        // The timer stays: arming and clearing one per body is the cost this saves. Run with nothing due, it is not armed again.
        watching.delete(watched)
      },
    }
  }
}

/** A watch with a timer of its own, re-armed only when it runs, so that a chunk costs a clock read, not a timer. */
export const ownTimerWatch: BodyWatcher = (bounds, stop) => {
  const deadline = Date.now() + bounds.ms
  let last = Date.now()
  let timer: Timer | undefined
  const arm = (ms: number) => {
    timer = setTimeout(check, Math.max(0, ms))
  }
  const check = () => {
    const now = Date.now()
    if (now >= deadline || now - last >= bounds.idleMs) {
      timer = undefined
      stop()
    } else arm(Math.min(deadline, last + bounds.idleMs) - now)
  }
  arm(Math.min(bounds.ms, bounds.idleMs))
  return {
    arrived() {
      last = Date.now()
    },
    cancel() {
      clearTimeout(timer)
      timer = undefined
    },
  }
}
