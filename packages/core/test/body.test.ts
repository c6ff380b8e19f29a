import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { DRAIN_IDLE_MS, DRAIN_MAX_BYTES, WebhookError } from '@hookguard/core'
import { readLimited } from '@hookguard/core/adapter'
import { describe, expect, it } from 'vitest'
import { wasDrained } from '../src/drain.ts'

const bytes = (...values: number[]) => new Uint8Array(values)
const KIB = 1024
const MIB = 1024 * KIB

async function refusal(promise: Promise<unknown>): Promise<WebhookError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  expect(error).toBeInstanceOf(WebhookError)
  return error as WebhookError
}

/** V8's collector, as `--expose-gc` gives it, to see what a reader still holds. */
function collector(): () => void {
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc') as () => void
}

/** A stream of `chunks` that then sends nothing more and never ends: a client waiting for the answer. */
function stalling(chunks: Uint8Array[]) {
  const seen = { cancelled: false }
  let sent = 0
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks[sent++]
      if (next !== undefined) controller.enqueue(next)
      else return new Promise<void>(() => {})
    },
    cancel() {
      seen.cancelled = true
    },
  })
  return { stream, seen }
}

/** A stream of `chunks`, recording how many were pulled and whether it was cancelled. */
function chunked(chunks: Uint8Array[]) {
  const seen = { pulled: 0, cancelled: false }
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks[seen.pulled++]
      if (next === undefined) controller.close()
      else controller.enqueue(next)
    },
    cancel() {
      seen.cancelled = true
    },
  })
  return { stream, seen }
}

describe('readLimited', () => {
  it('reads no stream as an empty body', async () => {
    expect(await readLimited(null, 16)).toEqual(new Uint8Array(0))
  })

  it('joins the chunks of a stream in order', async () => {
    const { stream } = chunked([bytes(1, 2), bytes(3), bytes(4, 5, 6)])
    expect(await readLimited(stream, 16)).toEqual(bytes(1, 2, 3, 4, 5, 6))
  })

  it('hands back a single chunk as it is', async () => {
    const { stream } = chunked([bytes(7, 8, 9)])
    expect(await readLimited(stream, 16)).toEqual(bytes(7, 8, 9))
  })

  it('accepts a stream of exactly the limit', async () => {
    const { stream } = chunked([bytes(1, 2), bytes(3, 4)])
    expect(await readLimited(stream, 4)).toEqual(bytes(1, 2, 3, 4))
  })

  it('refuses a stream that passes the limit once it has read the rest to its end, as drained', async () => {
    const { stream, seen } = chunked([bytes(1, 2), bytes(3, 4), bytes(5), bytes(6), bytes(7)])
    const error = await refusal(readLimited(stream, 4))
    expect(error).toMatchObject({ code: 'payload_too_large', status: 413 })
    expect(wasDrained(error)).toBe(true)
    // Every chunk and the end: the connection holds nothing of this body any more.
    expect(seen.pulled).toBe(6)
    expect(seen.cancelled).toBe(false)
  })

  describe('with a body declared over the limit that is a byte stream (a request body in Deno)', () => {
    /** A byte stream of `total` bytes that records the size of each buffer it was asked to fill. */
    const byteStream = (total: number) => {
      const seen = { left: total, largest: 0, cancelled: false }
      const stream = new ReadableStream({
        type: 'bytes',
        pull(controller) {
          const view = controller.byobRequest?.view
          if (view === null || view === undefined) throw new Error('a read into no buffer of the reader’s own')
          seen.largest = Math.max(seen.largest, view.byteLength)
          const n = Math.min(view.byteLength, seen.left)
          seen.left -= n
          controller.byobRequest?.respond(n)
          if (seen.left === 0) controller.close()
        },
        cancel() {
          seen.cancelled = true
        },
      })
      return { stream: stream as ReadableStream<Uint8Array>, seen }
    }

    it('drains it into one buffer of 64 KiB, refilled, never a new chunk per read', async () => {
      const { stream, seen } = byteStream(8 * MIB)
      expect(wasDrained(await refusal(readLimited(stream, MIB, 8 * MIB)))).toBe(true)
      expect(seen.left).toBe(0)
      expect(seen.largest).toBe(64 * KIB)
    })

    it('stops at the drain bound, cancels it and refuses it undrained', async () => {
      const { stream, seen } = byteStream(DRAIN_MAX_BYTES + 8 * MIB)
      const error = await refusal(readLimited(stream, MIB, DRAIN_MAX_BYTES + 8 * MIB))
      expect([error.code, wasDrained(error), seen.cancelled]).toEqual(['payload_too_large', false, true])
      expect(seen.left).toBeGreaterThan(7 * MIB)
    })
  })

  it('keeps nothing of a body declared over the limit, and drains it from the first byte', async () => {
    const { stream, seen } = chunked([bytes(1, 2), bytes(3)])
    expect(wasDrained(await refusal(readLimited(stream, 4, 5)))).toBe(true)
    expect(seen.pulled).toBe(3)
  })

  it(`drains at most ${DRAIN_MAX_BYTES / MIB} MiB past the limit, then cancels the stream and refuses it undrained`, async () => {
    // An endless body: the same 1 MiB chunk, again and again.
    const chunk = new Uint8Array(MIB)
    let pulled = 0
    let cancelled = false
    const stream = new ReadableStream<Uint8Array>({
      pull: (controller) => {
        pulled++
        controller.enqueue(chunk)
      },
      cancel: () => {
        cancelled = true
      },
    })
    const error = await refusal(readLimited(stream, MIB))
    expect([error.code, wasDrained(error), cancelled]).toEqual(['payload_too_large', false, true])
    // The chunk that passed the limit, 64 MiB drained, and the one that passed the bound; at most a read ahead more.
    expect(pulled).toBeGreaterThanOrEqual(1 + DRAIN_MAX_BYTES / MIB + 1)
    expect(pulled).toBeLessThanOrEqual(1 + DRAIN_MAX_BYTES / MIB + 2)
  })

  it(`stops waiting for the rest once no byte has arrived for ${DRAIN_IDLE_MS} ms, cancelling the stream`, async () => {
    const { stream, seen } = stalling([bytes(1, 2, 3, 4, 5)])
    const started = performance.now()
    const error = await refusal(readLimited(stream, 4))
    const waited = performance.now() - started
    expect([wasDrained(error), seen.cancelled]).toEqual([false, true])
    expect(waited).toBeGreaterThanOrEqual(DRAIN_IDLE_MS - 50)
    expect(waited).toBeLessThan(DRAIN_IDLE_MS + 1500)
  })

  it('stops at its time bound a body that keeps trickling in, each byte within the idle bound', async () => {
    let cancelled = false
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await new Promise((resolve) => setTimeout(resolve, 10))
        controller.enqueue(bytes(1, 2, 3))
      },
      cancel: () => {
        cancelled = true
      },
    })
    const started = performance.now()
    const error = await refusal(readLimited(stream, 4, undefined, { bytes: MIB, ms: 200, idleMs: 100 }))
    expect([wasDrained(error), cancelled]).toEqual([false, true])
    expect(performance.now() - started).toBeLessThan(1000)
  })

  describe('a body within the limit that stops arriving, or comes too slowly, before it can be judged', () => {
    it('cancels it and refuses it as invalid_body once no byte has come for the idle bound', async () => {
      const { stream, seen } = stalling([bytes(0x7b)])
      const started = performance.now()
      const error = await refusal(readLimited(stream, MIB, undefined, undefined, { ms: 5_000, idleMs: 100 }))
      expect([error.code, wasDrained(error), seen.cancelled]).toEqual(['invalid_body', false, true])
      expect(performance.now() - started).toBeGreaterThanOrEqual(90)
      expect(performance.now() - started).toBeLessThan(1000)
    })

    it('cancels it at the total bound when it keeps trickling in, each byte within the idle bound', async () => {
      let cancelled = false
      const stream = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await new Promise((resolve) => setTimeout(resolve, 10))
          controller.enqueue(bytes(0x20))
        },
        cancel: () => {
          cancelled = true
        },
      })
      const started = performance.now()
      const error = await refusal(readLimited(stream, MIB, undefined, undefined, { ms: 200, idleMs: 100 }))
      expect([error.code, cancelled]).toEqual(['invalid_body', true])
      expect(performance.now() - started).toBeLessThan(1000)
    })

    it('reads a body whose pieces each come within the idle bound', async () => {
      const pieces = [bytes(0x7b), bytes(0x7d)]
      const stream = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await new Promise((resolve) => setTimeout(resolve, 60))
          const next = pieces.shift()
          if (next === undefined) controller.close()
          else controller.enqueue(next)
        },
      })
      expect(await readLimited(stream, MIB, undefined, undefined, { ms: 1_000, idleMs: 100 })).toEqual(bytes(0x7b, 0x7d))
    })
  })

  it('refuses undrained a body whose stream fails while it drains (the client went away)', async () => {
    let pulled = 0
    const stream = new ReadableStream<Uint8Array>({
      pull: (controller) => {
        if (pulled++ < 2) controller.enqueue(bytes(1, 2, 3))
        else controller.error(new Error('socket hang up'))
      },
    })
    const error = await refusal(readLimited(stream, 4))
    expect([error.code, wasDrained(error)]).toEqual(['payload_too_large', false])
  })

  it('holds none of what it drains: of 32 MiB passed through, no chunk stays reachable', async () => {
    const gc = collector()
    const size = 64 * KIB
    const count = (32 * MIB) / size
    // One weak reference per chunk (a byte count would also see buffers the collector has not freed yet).
    const sent: WeakRef<Uint8Array>[] = []
    let alive: number | undefined
    let pulled = 0
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (pulled === count - 1) {
          // The last chunk: every one before it has been read. Past this job, nothing but the
          // reader can hold them.
          await new Promise((resolve) => setTimeout(resolve, 10))
          gc()
          alive = sent.filter((chunk) => chunk.deref() !== undefined).length
        }
        if (pulled++ === count) return controller.close()
        const chunk = new Uint8Array(size).fill(0x20)
        sent.push(new WeakRef(chunk))
        controller.enqueue(chunk)
      },
    })
    const error = await refusal(readLimited(stream, MIB))
    expect(wasDrained(error)).toBe(true)
    expect(alive).toBeDefined()
    // The 1 MiB kept before the limit was let go too; a chunk in flight at most.
    expect(alive).toBeLessThanOrEqual(2)
  })

  it('holds a body sent a byte at a time in pieces: of 4 096 one-byte chunks, only the first stays reachable', async () => {
    const gc = collector()
    const count = 4096
    const sent: WeakRef<Uint8Array>[] = []
    let alive: number | undefined
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent.length === count) {
          // Every chunk has been read; past this job, nothing but the reader can hold them.
          await new Promise((resolve) => setTimeout(resolve, 10))
          gc()
          alive = sent.filter((chunk) => chunk.deref() !== undefined).length
          return controller.close()
        }
        const chunk = bytes(0x30 + (sent.length % 10))
        sent.push(new WeakRef(chunk))
        controller.enqueue(chunk)
      },
    })
    const body = await readLimited(stream, MIB)
    expect(new TextDecoder().decode(body)).toBe('0123456789'.repeat(410).slice(0, count))
    expect(alive).toBeLessThanOrEqual(2)
  })

  it('refuses a stream whose one chunk is over the limit', async () => {
    const { stream } = chunked([bytes(1, 2, 3, 4, 5)])
    await expect(readLimited(stream, 4)).rejects.toMatchObject({ code: 'payload_too_large' })
  })
})
