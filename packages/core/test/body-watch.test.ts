import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { type BodyWatcher, ownTimerWatch, processTimerRelease, sharedTimerWatcher, watchBody } from '../src/body-watch.ts'
import type { TimeBounds } from '../src/drain.ts'

const BOUNDS: TimeBounds = { ms: 10_000, idleMs: 1_000 }
const NOW = 1_700_000_000_000

/** Timers that keep this process alive. */
const liveTimers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length

describe.each<[string, () => BodyWatcher]>([
  ['a timer shared by every watch', sharedTimerWatcher],
  ['a timer of its own', () => ownTimerWatch],
])('a body watch with %s', (_, watcher) => {
  let watch: BodyWatcher
  beforeEach(() => {
    // The clock too: the watch reads Date.now() to tell idle time from the total.
    vi.useFakeTimers({ now: NOW })
    watch = watcher()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('stops a sender that sends nothing once idleMs has passed, not before, and once', () => {
    const stop = vi.fn()
    watch(BOUNDS, stop)
    vi.advanceTimersByTime(999)
    expect(stop).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1)
    expect(stop).toHaveBeenCalledTimes(1)
    vi.advanceTimersByTime(60_000)
    expect(stop).toHaveBeenCalledTimes(1)
  })

  it('counts idle time from the last byte', () => {
    const stop = vi.fn()
    const watched = watch(BOUNDS, stop)
    vi.advanceTimersByTime(800)
    watched.arrived()
    vi.advanceTimersByTime(999)
    expect(stop).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1)
    expect(stop).toHaveBeenCalledTimes(1)
  })

  it('stops a sender that keeps sending once ms has passed since the start, not before', () => {
    const stop = vi.fn()
    const watched = watch(BOUNDS, stop)
    for (let elapsed = 0; elapsed < 9_999; elapsed += 1) {
      vi.advanceTimersByTime(1)
      if (elapsed % 500 === 0) watched.arrived()
    }
    expect(stop).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1)
    expect(stop).toHaveBeenCalledTimes(1)
  })

  it('stops at ms when ms is shorter than idleMs', () => {
    const stop = vi.fn()
    watch({ ...BOUNDS, ms: 300 }, stop)
    vi.advanceTimersByTime(299)
    expect(stop).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1)
    expect(stop).toHaveBeenCalledTimes(1)
  })

  it('keeps one timer, however many bytes arrive', () => {
    const watched = watch(BOUNDS, () => {})
    for (let chunk = 0; chunk < 100; chunk++) watched.arrived()
    expect(vi.getTimerCount()).toBe(1)
    vi.advanceTimersByTime(500)
    watched.arrived()
    vi.advanceTimersByTime(500)
    // Run once at the first idle check and armed again for the rest of the idle time.
    expect(vi.getTimerCount()).toBe(1)
    watched.cancel()
  })

  it('never stops once cancelled, and a second cancel is harmless', () => {
    const stop = vi.fn()
    const watched = watch(BOUNDS, stop)
    vi.advanceTimersByTime(500)
    watched.cancel()
    vi.advanceTimersByTime(60_000)
    watched.cancel()
    expect(stop).not.toHaveBeenCalled()
  })

  it('leaves no timer behind once stopped or cancelled', () => {
    const stop = vi.fn()
    const stopped = watch(BOUNDS, stop)
    const cancelled = watch(BOUNDS, () => {})
    cancelled.cancel()
    vi.advanceTimersByTime(1_000)
    expect(stop).toHaveBeenCalledTimes(1)
    expect(vi.getTimerCount()).toBe(0)
    stopped.cancel()
  })

  it('stops each of several bodies at its own bound', () => {
    const stops = [vi.fn(), vi.fn(), vi.fn()]
    watch(BOUNDS, stops[0] as () => void)
    vi.advanceTimersByTime(300)
    const second = watch(BOUNDS, stops[1] as () => void)
    // The drain's shorter bounds, begun after the receipt's: due before the timer armed for the others.
    watch({ ms: 10_000, idleMs: 200 }, stops[2] as () => void)
    vi.advanceTimersByTime(200)
    expect(stops.map((stop) => stop.mock.calls.length)).toEqual([0, 0, 1])
    second.arrived()
    vi.advanceTimersByTime(500)
    expect(stops.map((stop) => stop.mock.calls.length)).toEqual([1, 0, 1])
    vi.advanceTimersByTime(499)
    expect(stops.map((stop) => stop.mock.calls.length)).toEqual([1, 0, 1])
    vi.advanceTimersByTime(1)
    expect(stops.map((stop) => stop.mock.calls.length)).toEqual([1, 1, 1])
  })
})

describe('a timer shared by every watch', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('is one timer for a hundred bodies read at once, and none once they are read', () => {
    vi.useFakeTimers({ now: NOW })
    const watch = sharedTimerWatcher()
    const watched = Array.from({ length: 100 }, () => watch(BOUNDS, () => {}))
    expect(vi.getTimerCount()).toBe(1)
    for (const body of watched) body.cancel()
    vi.advanceTimersByTime(BOUNDS.idleMs)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('is not armed again for each body while one is pending', () => {
    vi.useFakeTimers({ now: NOW })
    const watch = sharedTimerWatcher()
    // The fake clock numbers its timers in turn: the gap between two probes counts the timers armed between them.
    const probe = () => Number(setTimeout(() => {}, 0))
    const first = probe()
    for (let body = 0; body < 50; body++) {
      watch(BOUNDS, () => {}).cancel()
      vi.advanceTimersByTime(10)
    }
    expect(probe() - first - 1).toBe(1)
  })

  it('never keeps the process alive', () => {
    const before = liveTimers()
    const watched = sharedTimerWatcher()(BOUNDS, () => {})
    expect(liveTimers()).toBe(before)
    watched.cancel()
  })

  it.each([
    ['put back', NOW],
    ['put forward', Date.now() + 86_400_000],
  ])('still stops a body once a replaced clock (%s) leaves its timer never to run', async (_, fakeNow) => {
    const watch = sharedTimerWatcher()
    vi.useFakeTimers({ now: fakeNow })
    watch(BOUNDS, () => {}).cancel()
    vi.useRealTimers()
    const stopped = new Promise<number>((resolve) => {
      const started = Date.now()
      watch({ ms: 1_000, idleMs: 50 }, () => resolve(Date.now() - started))
    })
    const never = new Promise<string>((resolve) => setTimeout(() => resolve('not stopped'), 2_000).unref())
    expect(await Promise.race([stopped, never])).toBeLessThan(1_000)
  })

  it("stops a body already due at once, not at a later body's moment, when its timer runs late", async () => {
    const lateMs = 50
    const watch = sharedTimerWatcher(lateMs)
    const started = Date.now()
    const stopped = new Promise<number>((resolve) => {
      watch({ ms: 60_000, idleMs: 20 }, () => resolve(Date.now() - started))
    })
    // The event loop held, as by a handler's synchronous work, past the due moment and lateMs.
    while (Date.now() - started < 20 + lateMs + 30) {}
    const later = watch({ ms: 60_000, idleMs: 10_000 }, () => {})
    const never = new Promise<string>((resolve) => setTimeout(() => resolve('not stopped'), 2_000).unref())
    expect(await Promise.race([stopped, never])).toBeLessThan(1_000)
    later.cancel()
  })
})

describe('watchBody on Node', () => {
  it('shares one timer that never keeps the process alive', () => {
    const before = liveTimers()
    const watched = Array.from({ length: 10 }, () => watchBody(BOUNDS, () => {}))
    expect(liveTimers()).toBe(before)
    for (const body of watched) body.cancel()
  })
})

describe('processTimerRelease: whether a timer is the process’s, and how to release it', () => {
  afterEach(() => {
    vi.unstubAllGlobals()
  })

  it("is the timer's own unref where a timer is an object (Node, Bun, Deno from 2.5)", () => {
    const release = processTimerRelease()
    expect(release).toBeTypeOf('function')
    const timer = setTimeout(() => {}, 60_000)
    release?.(timer)
    expect(timer.hasRef()).toBe(false)
    clearTimeout(timer)
  })

  it('is Deno.unrefTimer where a timer is a number and the runtime has that call (Deno 2.4 and earlier)', () => {
    const released: number[] = []
    let next = 0
    vi.stubGlobal('setTimeout', () => ++next)
    vi.stubGlobal('clearTimeout', () => {})
    vi.stubGlobal('Deno', { unrefTimer: (id: number) => released.push(id) })
    const release = processTimerRelease()
    expect(release).toBeTypeOf('function')
    release?.(41 as unknown as ReturnType<typeof setTimeout>)
    expect(released).toEqual([41])
  })

  it('is undefined where a timer is a number the runtime cannot release (workerd: it is the request’s)', () => {
    vi.stubGlobal('setTimeout', () => 1)
    vi.stubGlobal('clearTimeout', () => {})
    expect(processTimerRelease()).toBeUndefined()
  })

  it('shares one timer, released by the runtime’s call, where timers are numbers', () => {
    const released: unknown[] = []
    const watch = sharedTimerWatcher(1_000, (timer) => released.push(timer))
    const bodies = Array.from({ length: 20 }, () => watch(BOUNDS, () => {}))
    expect(released).toHaveLength(1)
    for (const body of bodies) body.cancel()
  })
})
