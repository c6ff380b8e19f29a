import { describe, expect, it } from 'vitest'
import { nestsDeeperThan, parseJson } from '../src/json.ts'

const encode = (text: string) => new TextEncoder().encode(text)

describe('parseJson', () => {
  it('parses UTF-8 JSON', () => {
    expect(parseJson(encode('{"名":"值","n":[1,2.5]}'), 1000)).toEqual({ value: { 名: '值', n: [1, 2.5] } })
  })

  for (const [label, body] of [
    ['empty', new Uint8Array()],
    ['not JSON', encode('event=ping')],
    ['truncated', encode('{"a":')],
    ['not UTF-8', new Uint8Array([0x22, 0xff, 0x22])],
  ] as const) {
    it(`refuses a body that is ${label}`, () => {
      expect(parseJson(body, 1000)).toBeUndefined()
    })
  }

  it('refuses 100 000 nested arrays without overflowing the stack', () => {
    expect(parseJson(encode(`${'['.repeat(100_000)}${']'.repeat(100_000)}`), 1000)).toBeUndefined()
  })
})

describe('nestsDeeperThan', () => {
  const nested = (depth: number) => encode(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`)

  it('allows exactly the limit and refuses one more', () => {
    expect(nestsDeeperThan(nested(5), 5)).toBe(false)
    expect(nestsDeeperThan(nested(6), 5)).toBe(true)
  })

  it('does not count brackets inside strings, even after escaped quotes', () => {
    expect(nestsDeeperThan(encode(`["\\"${'['.repeat(50)}"]`), 2)).toBe(false)
  })

  it('refuses the shortest document one level too deep', () => {
    for (const depth of [1, 2, 5]) {
      expect(nestsDeeperThan(encode(`${'['.repeat(depth + 1)}${']'.repeat(depth + 1)}`), depth)).toBe(true)
      expect(parseJson(encode(`${'['.repeat(depth + 1)}${']'.repeat(depth + 1)}`), depth)).toBeUndefined()
    }
  })

  it('counts the depth of siblings, not their number', () => {
    const siblings = encode(`[${'[1],{"a":2},'.repeat(40)}[]]`)
    expect(nestsDeeperThan(siblings, 2)).toBe(false)
    expect(nestsDeeperThan(siblings, 1)).toBe(true)
    expect(parseJson(siblings, 2)).not.toBeUndefined()
  })

  it('counts arrays and objects alike', () => {
    expect(nestsDeeperThan(encode('[{"a":[{"b":[1]}]}]'), 4)).toBe(true)
  })
})

describe('a body with a byte order mark', () => {
  it('is refused alike on every build, since JSON text must not begin with one (RFC 8259 §8.1)', () => {
    expect(parseJson(encode('\uFEFF{"a":1}'), 1000)).toBeUndefined()
  })
})
