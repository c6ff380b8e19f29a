import { timingSafeEqual } from '@hookguard/core/adapter'
import { describe, expect, it } from 'vitest'

const bytes = (...values: number[]) => new Uint8Array(values)

describe('timingSafeEqual', () => {
  it('is true for equal inputs of equal length', () => {
    expect(timingSafeEqual(bytes(1, 2, 3), bytes(1, 2, 3))).toBe(true)
  })

  it('is true for two empty inputs', () => {
    expect(timingSafeEqual(bytes(), bytes())).toBe(true)
  })

  it('is false for inputs of equal length that differ in any one byte', () => {
    for (let i = 0; i < 4; i++) {
      const other = bytes(9, 9, 9, 9)
      other[i] = 8
      expect(timingSafeEqual(other, bytes(9, 9, 9, 9))).toBe(false)
    }
  })

  it('is false when the input is a prefix of the expected value', () => {
    expect(timingSafeEqual(bytes(1, 2), bytes(1, 2, 3))).toBe(false)
  })

  it('is false when the expected value is a prefix of the input', () => {
    expect(timingSafeEqual(bytes(1, 2, 3), bytes(1, 2))).toBe(false)
  })

  it('is false for an empty input against a non-empty expected value, and the reverse', () => {
    expect(timingSafeEqual(bytes(), bytes(0))).toBe(false)
    expect(timingSafeEqual(bytes(0), bytes())).toBe(false)
  })
})
