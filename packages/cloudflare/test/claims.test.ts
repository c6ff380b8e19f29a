import { describe, expect, it } from 'vitest'
import { type ClaimRow, type ClaimRows, claimRow, completeRow, releaseRow } from '../src/claims.ts'

const KEY = `${'c'.repeat(32)}:${'a'.repeat(64)}`
const NOW = 1_000_000

function table(): ClaimRows & { map: Map<string, ClaimRow> } {
  const map = new Map<string, ClaimRow>()
  return {
    map,
    get: (key) => map.get(key),
    put: (key, row) => void map.set(key, row),
    delete: (key) => void map.delete(key),
  }
}

describe('the claim rules the Durable Object runs', () => {
  describe('claimRow', () => {
    it('grants a key no row holds, under the token given, until now + ttl', () => {
      const rows = table()
      expect(claimRow(rows, KEY, 30_000, NOW, 't1')).toEqual({ state: 'claimed', token: 't1' })
      expect(rows.map.get(KEY)).toEqual({ token: 't1', expiresAt: NOW + 30_000 })
    })

    it('answers processing, with the time the holder has left, while the claim lives', () => {
      const rows = table()
      claimRow(rows, KEY, 30_000, NOW, 't1')
      expect(claimRow(rows, KEY, 30_000, NOW + 10_000, 't2')).toEqual({ state: 'processing', retryAfterMs: 20_000 })
      expect(rows.map.get(KEY)?.token).toBe('t1')
    })

    it('grants the key again once the claim has lapsed (its holder died), at its expiry exactly', () => {
      const rows = table()
      claimRow(rows, KEY, 30_000, NOW, 't1')
      expect(claimRow(rows, KEY, 30_000, NOW + 29_999, 't2').state).toBe('processing')
      expect(claimRow(rows, KEY, 30_000, NOW + 30_000, 't3')).toEqual({ state: 'claimed', token: 't3' })
    })

    it('answers done while a done mark lives, and grants the key after it lapses', () => {
      const rows = table()
      completeRow(rows, KEY, 60_000, NOW)
      expect(claimRow(rows, KEY, 1000, NOW + 59_999, 't1')).toEqual({ state: 'done' })
      expect(claimRow(rows, KEY, 1000, NOW + 60_000, 't2')).toEqual({ state: 'claimed', token: 't2' })
    })

    it('keeps each key apart', () => {
      const rows = table()
      claimRow(rows, KEY, 1000, NOW, 't1')
      expect(claimRow(rows, `${KEY}b`, 1000, NOW, 't2').state).toBe('claimed')
    })
  })

  describe('completeRow', () => {
    it('marks the key done until now + ttl, and answers that time', () => {
      const rows = table()
      claimRow(rows, KEY, 1000, NOW, 't1')
      expect(completeRow(rows, KEY, 86_400_000, NOW + 500)).toBe(NOW + 500 + 86_400_000)
      expect(rows.map.get(KEY)).toEqual({ token: null, expiresAt: NOW + 500 + 86_400_000 })
    })

    it('marks done even while a newer claim holds the key: the delivery was handled, and the newer release leaves it', () => {
      const rows = table()
      claimRow(rows, KEY, 1000, NOW, 'late')
      claimRow(rows, KEY, 1000, NOW + 1000, 'newer')
      completeRow(rows, KEY, 60_000, NOW + 1500)
      releaseRow(rows, KEY, 'newer')
      expect(claimRow(rows, KEY, 1000, NOW + 2000, 't3')).toEqual({ state: 'done' })
    })
  })

  describe('releaseRow', () => {
    it('forgets the key its own claim holds, so that a retry runs', () => {
      const rows = table()
      claimRow(rows, KEY, 30_000, NOW, 't1')
      releaseRow(rows, KEY, 't1')
      expect(rows.map.has(KEY)).toBe(false)
    })

    it('leaves a newer claim alone when an expired claim releases late', () => {
      const rows = table()
      claimRow(rows, KEY, 1000, NOW, 'late')
      claimRow(rows, KEY, 1000, NOW + 1000, 'newer')
      releaseRow(rows, KEY, 'late')
      expect(rows.map.get(KEY)?.token).toBe('newer')
    })

    it('leaves a done mark alone, and a key no row holds', () => {
      const rows = table()
      claimRow(rows, KEY, 1000, NOW, 't1')
      completeRow(rows, KEY, 1000, NOW)
      releaseRow(rows, KEY, 't1')
      releaseRow(rows, 'other', 't1')
      expect(rows.map.get(KEY)?.token).toBeNull()
      expect(rows.map.size).toBe(1)
    })
  })
})
