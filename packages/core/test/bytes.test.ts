import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fromBase64, fromBase64Url, fromHex, occursMoreThan, toBase64Url } from '../src/bytes.ts'
import { fromHex as fromHexNode, isUtf8Bytes as isUtf8Node, toBase64 as toBase64Node } from '../src/bytes-platform/node.ts'
import { fromHex as fromHexWeb, isUtf8Bytes as isUtf8Web, toBase64 as toBase64Web } from '../src/bytes-platform/web.ts'

// The decoders that stand between a sender's text and a comparison: each refuses, rather than
// repairs, what is not exactly its own alphabet, so no two spellings decode to the same bytes.

describe.each([
  ['this build', fromHex],
  ['the Node build', fromHexNode],
  ['the Web build', fromHexWeb],
])('fromHex, %s', (_, fromHex) => {
  it('decodes either case', () => {
    expect([...(fromHex('00fFa5') ?? [])]).toEqual([0x00, 0xff, 0xa5])
    expect([...(fromHex('') ?? [9])]).toEqual([])
  })

  it('refuses an odd length and any character outside 0-9 a-f A-F, in either half of a byte', () => {
    for (const text of ['abc', 'g0', '0g', 'zz', ' 0', '0 ', '-1', '0x', `${'ab'.repeat(31)}0g`])
      expect(fromHex(text), text).toBeUndefined()
  })

  it('refuses characters outside ASCII, those whose low byte is a hex digit among them', () => {
    // U+0161 U+0162 end in 0x61 0x62 ('a', 'b'); U+0130 U+0131 in '0', '1'; U+00E9 is Latin-1.
    for (const text of ['\u0161\u0162', '\u0130\u0131', 'a\u0161', '\u00e90', `${'ab'.repeat(31)}\u0130\u0131`]) {
      expect(fromHex(text), JSON.stringify(text)).toBeUndefined()
    }
  })
})

describe('toBase64', () => {
  // A job's raw body is base64: every runtime's encoder writes what Node's reference writes, for
  // views into a larger buffer too, and over the web encoder's chunk size.
  const reference = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
  const views = fc
    .tuple(fc.uint8Array({ maxLength: 20_000 }), fc.nat(16), fc.nat(16))
    .map(([bytes, head, tail]) => bytes.subarray(Math.min(head, bytes.length), Math.max(head, bytes.length - tail)))

  it.each([
    ['node', toBase64Node],
    ['web', toBase64Web],
  ])('%s: the reference base64 of any bytes, a view or whole', (_, toBase64) => {
    fc.assert(
      fc.property(views, (bytes) => toBase64(bytes) === reference(bytes)),
      { numRuns: 200 },
    )
    const large = new Uint8Array(3 * 0x2000 + 7).map((_, i) => (i * 31) & 0xff)
    expect(toBase64(large)).toBe(reference(large))
  })
})

describe('fromBase64', () => {
  it('decodes standard base64, padded', () => {
    expect(fromBase64('aGk=')).toEqual(new TextEncoder().encode('hi'))
  })

  it('refuses characters outside the alphabet anywhere, padding in the middle, and impossible lengths', () => {
    for (const text of ['aGk=!', '!aGk=', 'aG=k', 'a', 'aGk=a', 'aGk===', 'aG k']) expect(fromBase64(text), text).toBeUndefined()
  })
})

describe('fromBase64Url', () => {
  it('decodes unpadded base64url, and round-trips what toBase64Url writes', () => {
    const bytes = new Uint8Array([0xfb, 0xff, 0xbf, 0x01])
    expect(toBase64Url(bytes)).toBe('-_-_AQ')
    expect(fromBase64Url('-_-_AQ')).toEqual(bytes)
  })

  it('refuses padding, the standard alphabet, and characters outside it anywhere', () => {
    for (const text of ['AQ==', '+/+/AQ', 'AQ!', '!AQ', 'A Q']) expect(fromBase64Url(text), text).toBeUndefined()
  })

  it('refuses a non-canonical spelling: unused bits of the last character set', () => {
    // 'AQ' is 0x01; 'AR' spells the same byte with a stray low bit.
    expect(fromBase64Url('AQ')).toEqual(new Uint8Array([1]))
    expect(fromBase64Url('AR')).toBeUndefined()
  })
})

describe('occursMoreThan', () => {
  const text = (value: string) => new TextEncoder().encode(value)

  it('counts every occurrence of every value, up to the limit', () => {
    const body = text('{"a":[{"b":[1]}],"c":{}}')
    // Three `{` and two `[`.
    expect(occursMoreThan(body, [0x7b, 0x5b], 5)).toBe(false)
    expect(occursMoreThan(body, [0x7b, 0x5b], 4)).toBe(true)
    expect(occursMoreThan(body, [0x5b], 2)).toBe(false)
    expect(occursMoreThan(body, [0x5b], 1)).toBe(true)
  })

  it('counts occurrences at both ends and next to each other', () => {
    expect(occursMoreThan(text('[[x[['), [0x5b], 3)).toBe(true)
    expect(occursMoreThan(text('[[x[['), [0x5b], 4)).toBe(false)
    expect(occursMoreThan(new Uint8Array(0), [0x5b], 0)).toBe(false)
  })
})

describe.each([
  ['the Node build', isUtf8Node],
  ['the Web build', isUtf8Web],
])('isUtf8Bytes, %s', (_, isUtf8Bytes) => {
  // What it must answer is what the strict decoder does: a body stripped of whitespace verifies
  // only if this says its bytes were UTF-8 (signature.ts).
  const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
  const decodes = (bytes: Uint8Array) => {
    try {
      strict.decode(bytes)
      return true
    } catch {
      return false
    }
  }
  // Bytes where a validator goes wrong: every lead byte's edges, the continuation range's, and the
  // second bytes that make an overlong form, a surrogate or a code point past U+10FFFF.
  const edge = fc.constantFrom(
    0x00,
    0x7f,
    0x80,
    0x8f,
    0x90,
    0x9f,
    0xa0,
    0xbf,
    0xc0,
    0xc1,
    0xc2,
    0xdf,
    0xe0,
    0xed,
    0xef,
    0xf0,
    0xf4,
    0xf5,
    0xff,
  )
  const character = fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).map((text) => [...new TextEncoder().encode(text)])
  const unit = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 3 }).map((text) => [...new TextEncoder().encode(text)]),
    fc.array(edge, { maxLength: 4 }),
    // A character with one of its bytes replaced, or cut short.
    fc.tuple(character, fc.nat(3), edge).map(([bytes, at, byte]) => bytes.map((b, k) => (k === at % bytes.length ? byte : b))),
    fc.tuple(character, fc.nat(3)).map(([bytes, cut]) => bytes.slice(0, Math.max(1, bytes.length - 1 - (cut % bytes.length)))),
    fc.array(fc.integer({ min: 0, max: 0x7f }), { minLength: 4, maxLength: 12 }),
  )
  // At every alignment in a larger buffer, so that runs of ASCII read a word at a time start, end
  // and break on a multi-byte character anywhere in a word.
  const views = fc.tuple(fc.array(unit, { maxLength: 24 }), fc.nat(7)).map(([units, head]) => {
    const bytes = units.flat()
    const buffer = new Uint8Array(head + bytes.length + 4).fill(0xff)
    buffer.set(bytes, head)
    return buffer.subarray(head, head + bytes.length)
  })

  it('answers as the strict decoder does, for any bytes at any alignment', () => {
    fc.assert(
      fc.property(views, (bytes) => {
        expect(isUtf8Bytes(bytes), [...bytes].map((byte) => byte.toString(16)).join(' ')).toBe(decodes(bytes))
      }),
      { numRuns: 3000 },
    )
  })

  it('accepts any text encoded, and refuses each form table 3-7 leaves out', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 64 }), (text) => isUtf8Bytes(new TextEncoder().encode(text))))
    const refused = [
      [0x80], // a continuation byte with no lead
      [0xc0, 0x80], // overlong NUL
      [0xc1, 0xbf], // overlong U+007F
      [0xe0, 0x9f, 0xbf], // overlong U+07FF
      [0xed, 0xa0, 0x80], // a surrogate, U+D800
      [0xf0, 0x8f, 0xbf, 0xbf], // overlong U+FFFF
      [0xf4, 0x90, 0x80, 0x80], // past U+10FFFF
      [0xf5, 0x80, 0x80, 0x80],
      [0xe4, 0xb8], // a character cut short at the end
      [0xf0, 0x9f, 0x98], // and a four-byte one
      [0xc3, 0x41], // a lead byte before ASCII, at each length
      [0xe4, 0xb8, 0x41],
      [0xf0, 0x9f, 0x98, 0x41],
      [0xe4, 0x20, 0xb8, 0xad], // whitespace inside a character
    ]
    for (const bytes of refused) {
      // After a run of ASCII long enough to be read a word at a time, and alone.
      for (const prefix of [[], [...'{"name":"'].map((c) => c.charCodeAt(0))]) {
        expect(isUtf8Bytes(new Uint8Array([...prefix, ...bytes])), bytes.join(' ')).toBe(false)
      }
    }
  })
})
