import { readHeader } from '@hookguard/core/adapter'
import { describe, expect, it } from 'vitest'

describe('readHeader', () => {
  it("reads Node's rawHeaders whatever the case of either name, letters A to Z included", () => {
    expect(readHeader(['X-Zone-a', 'v'], 'x-zONE-A')).toBe('v')
    expect(readHeader(['x-zone-a', 'v'], 'X-ZONE-A')).toBe('v')
  })

  // Characters 0x20 apart that are not letters, as a bitwise case fold would take them for one another.
  it.each([
    ['@', '`'],
    ['[', '{'],
    ['\\', '|'],
    [']', '}'],
    ['^', '~'],
  ])('folds letters only: %s is not %s', (a, b) => {
    expect(readHeader([`x-${a}`, 'v'], `x-${b}`)).toBeNull()
    expect(readHeader([`x-${b}`, 'v'], `x-${a}`)).toBeNull()
  })

  it('folds no character outside ASCII: the Kelvin sign is not a k', () => {
    // `toLowerCase()` maps U+212A to 'k'; HTTP names are ASCII tokens, compared without Unicode case.
    expect(readHeader(['\u212a-id', 'v'], 'k-id')).toBeNull()
  })

  it('reads no header whose name only begins or ends like the one asked for', () => {
    expect(readHeader(['x-i', 'v'], 'x-id')).toBeNull()
    expect(readHeader(['x-idx', 'v'], 'x-id')).toBeNull()
  })

  it('joins the lines of a repeated header, whatever their case', () => {
    expect(readHeader(['X-Id', 'a', 'x-id', 'b', 'X-ID', 'c'], 'x-id')).toBe('a, b, c')
  })
})
