import { describe, expect, it } from 'vitest'
import { shardName, shardOf } from '../src/shard.ts'

const hex = (i: number) =>
  Array.from({ length: 8 }, (_, k) => ((i * 2_654_435_761 + k * 40_503) >>> 0).toString(16).padStart(8, '0')).join('')

describe('shardOf', () => {
  it('puts a key in the same shard every time', () => {
    const key = `0123456789abcdef0123456789abcdef:${hex(7)}`
    expect(shardOf(key, 16)).toBe(shardOf(key, 16))
    expect(shardOf(key, 1)).toBe(0)
  })

  it('spreads the deliveries of one scope over every shard, though their keys share a prefix', () => {
    const counts = new Array<number>(16).fill(0)
    for (let i = 0; i < 4096; i++) {
      const shard = shardOf(`0123456789abcdef0123456789abcdef:${hex(i)}`, 16)
      counts[shard] = (counts[shard] ?? 0) + 1
    }
    // 256 each on average; a fair hash keeps every shard well within half and twice that.
    expect(Math.min(...counts)).toBeGreaterThan(128)
    expect(Math.max(...counts)).toBeLessThan(512)
  })

  it('answers a whole number below the shard count, for any key', () => {
    for (const key of ['x', 'ü'.repeat(500), `tenant-42:${hex(1)}`]) {
      for (const shards of [1, 3, 16, 1024]) {
        const shard = shardOf(key, shards)
        expect(Number.isInteger(shard) && shard >= 0 && shard < shards).toBe(true)
      }
    }
  })
})

describe('shardName', () => {
  it('names each shard’s object', () => {
    expect(shardName(0)).toBe('hookguard-dedupe:0')
    expect(shardName(15)).toBe('hookguard-dedupe:15')
  })
})
