import { describe, expect, it } from 'vitest'
import { prettyPayload } from '../src/page/pretty.ts'

const bytes = (text: string) => new TextEncoder().encode(text)
/** What the parsed pane may hold for a body of `length` bytes (docs/inspect.md). */
const bound = (length: number) => 4 * length + 64 * 1024

describe('the parsed pane’s text', () => {
  it('is what JSON.stringify prints, two spaces a level, for JSON within its bound', () => {
    for (const text of ['{"a":[1,-2.5e-3,true,false,null,"x\\u0041"],"b":{}}', '[]', '"\\ud83d\\ude00"', '1E5', '[-0,0.1e1]']) {
      expect(prettyPayload(bytes(text)), text).toBe(JSON.stringify(JSON.parse(text), null, 2))
    }
  })

  it('never runs past four times the body and 64 KiB, numbers that print longer than they are written included', () => {
    const size = 256 * 1024
    const shapes = {
      '1e20 a number': `[${'1e20,'.repeat(size / 5 - 1)}1e20]`,
      '1e20 seven arrays deep': `[${'[[[[[[[1e20]]]]]]],'.repeat(size / 19 - 1)}0]`,
      'short numbers': `[${'0,'.repeat(size / 2 - 1)}0]`,
      'empty objects': `[${'{},'.repeat(size / 3 - 1)}{}]`,
      'one long string': `"${'a'.repeat(size)}"`,
    }
    for (const [name, text] of Object.entries(shapes)) {
      const printed = prettyPayload(bytes(text))
      if (printed !== undefined) expect(printed.length, name).toBeLessThanOrEqual(bound(text.length))
    }
    // Within the bound, a pane is still printed.
    expect(prettyPayload(bytes(shapes['one long string']))).toBeDefined()
  })

  it('is not printed for a body the receiver refuses as JSON: a byte order mark, bytes that are not UTF-8', () => {
    expect(prettyPayload(new Uint8Array([0xef, 0xbb, 0xbf, ...bytes('{"a":1}')]))).toBeUndefined()
    expect(prettyPayload(new Uint8Array([0x22, 0xff, 0x22]))).toBeUndefined()
    expect(prettyPayload(bytes('{"a":1} trailing'))).toBeUndefined()
  })
})
