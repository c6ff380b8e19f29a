import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BODY_PIECE, BodyBytes, joinBytes } from '../src/body-bytes.ts'

/** A body's bytes gathered as the readers gather them, with every allocation and the final join counted. */
function gathered(chunks: readonly Uint8Array[]) {
  const seen = { allocated: 0, joined: undefined as number | undefined }
  const kept = new BodyBytes<Uint8Array>(
    (length) => {
      seen.allocated++
      return new Uint8Array(length)
    },
    (pieces, size) => {
      seen.joined = pieces.length
      return joinBytes(pieces, size)
    },
  )
  for (const chunk of chunks) kept.add(chunk)
  return { bytes: kept.bytes(), size: kept.size, seen }
}

const concatenated = (chunks: readonly Uint8Array[]) => new Uint8Array(Buffer.concat(chunks))

/** Distinct bytes to cut chunks from, so that a piece out of place shows. */
const SOURCE = Uint8Array.from({ length: 4 * BODY_PIECE }, (_, i) => (i * 31 + (i >> 8)) & 0xff)

describe('BodyBytes', () => {
  it('hands a body that came in one chunk back as that chunk, without a copy', () => {
    const chunk = new Uint8Array([1, 2, 3])
    const { bytes, seen } = gathered([chunk])
    expect(bytes).toBe(chunk)
    expect(seen).toEqual({ allocated: 0, joined: undefined })
  })

  it('hands an empty body back empty', () => {
    expect(gathered([]).bytes).toEqual(new Uint8Array(0))
  })

  it('keeps every byte in order, whatever the chunks, in about three pieces per piece size at most', () => {
    // Chunk lengths around the piece size, where a short chunk fills a piece's end and starts the next.
    const length = fc.oneof(fc.nat(8), fc.integer({ min: BODY_PIECE - 8, max: BODY_PIECE + 8 }), fc.nat(3 * BODY_PIECE))
    const chunk = fc.tuple(length, fc.nat(BODY_PIECE)).map(([size, offset]) => SOURCE.subarray(offset, offset + size))
    fc.assert(
      fc.property(fc.array(chunk, { maxLength: 24 }), (chunks) => {
        const { bytes, size, seen } = gathered(chunks)
        expect(Buffer.from(bytes).equals(concatenated(chunks))).toBe(true)
        expect(size).toBe(bytes.byteLength)
        expect(seen.joined ?? 1).toBeLessThanOrEqual(2 + (3 * size) / BODY_PIECE)
      }),
      { numRuns: 150 },
    )
  })

  it('holds a body sent a byte at a time in pieces, not a chunk per byte', () => {
    const chunks = Array.from({ length: 2 * BODY_PIECE + 1 }, (_, i) => new Uint8Array([i & 0xff]))
    const { bytes, seen } = gathered(chunks)
    expect(Buffer.from(bytes).equals(concatenated(chunks))).toBe(true)
    // The first chunk as it came, then two full pieces.
    expect(seen).toEqual({ allocated: 2, joined: 3 })
  })

  it('lets go of what it held once cleared, and starts again from nothing', () => {
    const kept = new BodyBytes()
    kept.add(new Uint8Array([1]))
    kept.add(new Uint8Array([2]))
    kept.clear()
    expect(kept.size).toBe(0)
    kept.add(new Uint8Array([3]))
    kept.add(new Uint8Array([4]))
    expect([...kept.bytes()]).toEqual([3, 4])
  })
})
