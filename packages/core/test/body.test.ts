import { readLimited } from '@hookguard/core/adapter'
import { describe, expect, it } from 'vitest'

const bytes = (...values: number[]) => new Uint8Array(values)

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

  it('refuses as soon as the stream passes the limit, and cancels the rest', async () => {
    const { stream, seen } = chunked([bytes(1, 2), bytes(3, 4), bytes(5), bytes(6), bytes(7)])
    await expect(readLimited(stream, 4)).rejects.toMatchObject({ code: 'payload_too_large', status: 413 })
    expect(seen.pulled).toBeLessThanOrEqual(4)
    expect(seen.cancelled).toBe(true)
  })

  it('refuses a stream whose one chunk is over the limit', async () => {
    const { stream } = chunked([bytes(1, 2, 3, 4, 5)])
    await expect(readLimited(stream, 4)).rejects.toMatchObject({ code: 'payload_too_large' })
  })
})
