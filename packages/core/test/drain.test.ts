import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { type DrainBounds, drainedRefusal, drainWatch, wasDrained } from '../src/drain.ts'
import { payloadTooLarge } from '../src/errors.ts'

const BOUNDS: DrainBounds = { bytes: 1024, ms: 10_000, idleMs: 1_000 }

describe('drainWatch: when the discarding of a refused body stops', () => {
  beforeEach(() => {
    // The clock too: the watch reads Date.now() to tell idle time from the total.
    vi.useFakeTimers({ now: 1_700_000_000_000 })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('stops a sender that sends nothing once idleMs has passed, not before', () => {
    const stop = vi.fn()
    drainWatch(BOUNDS, stop)
    vi.advanceTimersByTime(999)
    expect(stop).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1)
    expect(stop).toHaveBeenCalledTimes(1)
    vi.advanceTimersByTime(60_000)
    expect(stop).toHaveBeenCalledTimes(1)
  })

  it('counts idle time from the last byte', () => {
    const stop = vi.fn()
    const watch = drainWatch(BOUNDS, stop)
    vi.advanceTimersByTime(800)
    watch.arrived()
    vi.advanceTimersByTime(999)
    expect(stop).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1)
    expect(stop).toHaveBeenCalledTimes(1)
  })

  it('stops a sender that keeps sending once ms has passed since the refusal, not before', () => {
    const stop = vi.fn()
    const watch = drainWatch(BOUNDS, stop)
    for (let elapsed = 0; elapsed < 9_999; elapsed += 1) {
      vi.advanceTimersByTime(1)
      if (elapsed % 500 === 0) watch.arrived()
    }
    expect(stop).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1)
    expect(stop).toHaveBeenCalledTimes(1)
  })

  it('stops at ms when ms is shorter than idleMs', () => {
    const stop = vi.fn()
    drainWatch({ ...BOUNDS, ms: 300 }, stop)
    vi.advanceTimersByTime(299)
    expect(stop).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1)
    expect(stop).toHaveBeenCalledTimes(1)
  })

  it('keeps one timer at a time, however many bytes arrive', () => {
    const watch = drainWatch(BOUNDS, () => {})
    for (let chunk = 0; chunk < 100; chunk++) watch.arrived()
    expect(vi.getTimerCount()).toBe(1)
    vi.advanceTimersByTime(500)
    watch.arrived()
    vi.advanceTimersByTime(500)
    // Fired once at the first idle check and re-armed for the rest of the idle time.
    expect(vi.getTimerCount()).toBe(1)
    watch.cancel()
  })

  it('never stops once cancelled, and a second cancel is harmless', () => {
    const stop = vi.fn()
    const watch = drainWatch(BOUNDS, stop)
    vi.advanceTimersByTime(500)
    watch.cancel()
    expect(vi.getTimerCount()).toBe(0)
    vi.advanceTimersByTime(60_000)
    watch.cancel()
    expect(stop).not.toHaveBeenCalled()
  })

  it('leaves no timer behind once it has stopped', () => {
    const stop = vi.fn()
    const watch = drainWatch(BOUNDS, stop)
    vi.advanceTimersByTime(1_000)
    expect(stop).toHaveBeenCalledTimes(1)
    expect(vi.getTimerCount()).toBe(0)
    watch.cancel()
  })
})

describe('wasDrained', () => {
  it('tells a refusal whose body was read to its end from one whose body was not', () => {
    expect(wasDrained(drainedRefusal(1024))).toBe(true)
    expect(wasDrained(payloadTooLarge(1024))).toBe(false)
  })

  it.each([null, undefined, 'payload_too_large', 413, {}])('answers false for %o', (value) => {
    expect(wasDrained(value)).toBe(false)
  })
})
