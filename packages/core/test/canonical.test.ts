import { escapeLikeGson, stripJavaWhitespace, stripUnicodeWhitespace } from '@hookguard/core/adapter'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { gsonCandidate, mayHaveGsonForm } from '../src/canonical.ts'
import { indexOfJavaWhitespace } from '../src/strip.ts'
import { unicodeJsonValue, unicodeUnit } from './arbitraries.ts'

const encode = (text: string) => new TextEncoder().encode(text)
const decode = (bytes: Uint8Array) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes)

/** What Java's `String.replaceAll("\\s+", "")` leaves, written out character by character. */
const javaReplaceAll = (text: string) =>
  [...text].filter((c) => !(c === ' ' || c === '\t' || c === '\n' || c === '\x0B' || c === '\f' || c === '\r')).join('')

// Strings drawn from whitespace of every kind, JSON punctuation, ASCII, CJK and astral characters.
const tricky = fc.string({
  unit: fc.oneof(
    fc.constantFrom(' ', '\t', '\n', '\x0B', '\f', '\r', '\u00A0', '\u3000', '\u2028', '\u2029', '\uFEFF', '\u1680', '\u0085'),
    fc.constantFrom('{', '}', '"', '\\', ':', ',', '<', '>', '&', '=', "'"),
    fc.string({ unit: 'grapheme', maxLength: 1 }),
    unicodeUnit,
  ),
})

describe('stripJavaWhitespace', () => {
  it('removes space, tab, line feed, vertical tab, form feed and carriage return', () => {
    expect(decode(stripJavaWhitespace(encode('{ "a" :\t1,\n"b":\x0B2\f,\r"c": "x y" }')))).toBe('{"a":1,"b":2,"c":"xy"}')
  })

  it('keeps a full-width space (U+3000) and a no-break space (U+00A0)', () => {
    expect(decode(stripJavaWhitespace(encode('"李\u3000雷 12\u00A0Rue"')))).toBe('"李\u3000雷12\u00A0Rue"')
  })

  it('keeps the two-character escapes \\t and \\n, which are not whitespace bytes', () => {
    expect(decode(stripJavaWhitespace(encode('"a\\tb\\nc"')))).toBe('"a\\tb\\nc"')
  })

  it('returns the very same array, not a copy, when there is nothing to remove', () => {
    const body = encode('{"compact":true}')
    expect(stripJavaWhitespace(body)).toBe(body)
  })

  it("removes exactly the characters Java's \\s matches, for any text", () => {
    fc.assert(
      fc.property(tricky, (text) => {
        expect(decode(stripJavaWhitespace(encode(text)))).toBe(javaReplaceAll(text))
      }),
    )
  })

  it('agrees with a byte-by-byte reference at every alignment and length', () => {
    const reference = (bytes: Uint8Array) => bytes.filter((b) => ![0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d].includes(b))
    // Bytes around 0x20 and above 0x80 are where a word-at-a-time test could go wrong.
    const byte = fc.oneof(fc.integer({ min: 0, max: 0x22 }), fc.integer({ min: 0x7e, max: 0x82 }), fc.integer({ min: 0, max: 255 }))
    fc.assert(
      fc.property(fc.array(byte, { maxLength: 90 }), fc.nat(3), (bytes, offset) => {
        const backing = new Uint8Array(bytes.length + offset)
        backing.set(bytes, offset)
        const body = backing.subarray(offset)
        expect(Array.from(stripJavaWhitespace(body))).toEqual(Array.from(reference(body)))
      }),
    )
  })

  it('is idempotent', () => {
    fc.assert(
      fc.property(tricky, (text) => {
        const once = stripJavaWhitespace(encode(text))
        expect(stripJavaWhitespace(once)).toEqual(once)
      }),
    )
  })
})

describe('stripUnicodeWhitespace', () => {
  it("removes what JavaScript's and Python's \\s remove, U+3000 and U+00A0 among them", () => {
    expect(decode(stripUnicodeWhitespace(encode('"李\u3000雷 x\u00A0y\u2028z\uFEFF\u0085\u1680\u205F"')) as Uint8Array)).toBe('"李雷xyz"')
  })

  it('keeps every character that shares leading UTF-8 bytes with a whitespace character, and removes each whitespace at the edges of its range', () => {
    // Same lead byte (C2, E1, E2, E3, EF), or the same first two bytes, as U+0085, U+00A0, U+1680,
    // U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF; none of them is whitespace.
    const neighbours = [
      '\u0084',
      '\u0086',
      '\u009F',
      '\u00A1',
      '\u00A9',
      '\u1681',
      '\u16C0',
      '\u1000',
      '\u200B',
      '\u200C',
      '\u2027',
      '\u202A',
      '\u202E',
      '\u2030',
      '\u205E',
      '\u2060',
      '\u2068',
      '\u209F',
      '\u3001',
      '\u3040',
      '\uFEFE',
      '\uFF3F',
    ]
    const whitespace = ['\u0085', '\u00A0', '\u1680', '\u2000', '\u200A', '\u2028', '\u2029', '\u202F', '\u205F', '\u3000', '\uFEFF']
    const text = neighbours.map((c, i) => `${c}${whitespace[i % whitespace.length]}`).join('')
    expect(decode(stripUnicodeWhitespace(encode(text)) as Uint8Array)).toBe(neighbours.join(''))
  })

  it('answers undefined when the body holds no whitespace beyond Java’s, so no HMAC is spent on it', () => {
    expect(stripUnicodeWhitespace(encode('{ "a": "b c" }'))).toBeUndefined()
  })

  it('matches a JavaScript \\s strip for any text that has extra whitespace', () => {
    fc.assert(
      fc.property(tricky, (text) => {
        const result = stripUnicodeWhitespace(encode(text))
        // JavaScript's \s, plus what Python's \s adds: U+0085 and U+001C–U+001F.
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the information separators are the point
        const js = text.replace(/\s/g, '').replace(/[\u0085\u001C-\u001F]/g, '')
        if (result === undefined) expect(js).toBe(javaReplaceAll(text))
        else expect(decode(result)).toBe(js)
      }),
    )
  })
})

describe('escapeLikeGson', () => {
  it("writes < > & = ' as Gson's \\u escapes", () => {
    expect(decode(escapeLikeGson(encode(`"<b>&a='1'"`)) as Uint8Array)).toBe('"\\u003cb\\u003e\\u0026a\\u003d\\u00271\\u0027"')
  })

  it('escapes U+2028 and U+2029 as Gson does', () => {
    expect(decode(escapeLikeGson(encode('"a\u2028b\u2029"')) as Uint8Array)).toBe('"a\\u2028b\\u2029"')
  })

  it('answers undefined when there is nothing to escape', () => {
    expect(escapeLikeGson(encode('{"plain":"text"}'))).toBeUndefined()
  })

  it('produces what JSON.parse reads back as the same value', () => {
    fc.assert(
      fc.property(unicodeJsonValue(), (value) => {
        const text = encode(JSON.stringify(value))
        const escaped = escapeLikeGson(text)
        if (escaped !== undefined) expect(JSON.parse(decode(escaped))).toEqual(JSON.parse(decode(text)))
      }),
    )
  })
})

describe('indexOfJavaWhitespace', () => {
  it('finds a lone whitespace byte anywhere in a large body, at every alignment', () => {
    for (const ws of [0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d]) {
      for (const size of [1, 7, 64, 3000, 70_000]) {
        for (const at of [0, 1, 2, 3, Math.floor(size / 2), size - 1]) {
          if (at >= size) continue
          for (const shift of [0, 1, 2, 3]) {
            const buffer = new Uint8Array(size + shift).fill(0x78)
            buffer[shift + at] = ws
            expect(indexOfJavaWhitespace(buffer.subarray(shift))).toBe(at)
          }
        }
      }
    }
  })

  it('finds none in a body of every other byte value, including the ones just above and below', () => {
    const others = Array.from({ length: 256 }, (_, b) => b).filter((b) => ![0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d].includes(b))
    expect(indexOfJavaWhitespace(Uint8Array.from({ length: 4096 }, (_, i) => others[i % others.length] as number))).toBe(-1)
  })
})

describe('gsonCandidate', () => {
  it("applies Gson's escapes and removes Java's whitespace in one pass", () => {
    const body = encode(`{ "note": "a <b> tag & c='1' in a longer text" }`)
    expect(decode(gsonCandidate(body) as Uint8Array)).toBe('{"note":"a\\u003cb\\u003etag\\u0026c\\u003d\\u00271\\u0027inalongertext"}')
  })

  it('is the escaped text with the whitespace stripped, for any text', () => {
    fc.assert(
      fc.property(tricky, (text) => {
        const escaped = gsonCandidate(encode(text))
        const expected = escapeLikeGson(encode(text))
        if (expected === undefined || escaped === undefined) return
        expect(decode(escaped)).toBe(javaReplaceAll(decode(expected)))
      }),
    )
  })

  it('makes nothing for a body with nothing to escape', () => {
    expect(gsonCandidate(encode('{ "plain": "text" }'))).toBeUndefined()
  })

  it('makes nothing for text whose only E2 bytes start curly quotes, dashes or an ellipsis', () => {
    // U+2028/9 share their lead byte with ordinary punctuation; only the whole sequence is escaped.
    for (const body of [encode('{"note":"\u201cquoted\u201d \u2014 it\u2019s\u2026"}'), new Uint8Array(1024).fill(0xe2)]) {
      expect(gsonCandidate(body)).toBeUndefined()
    }
    for (const body of [encode('{"note":"a\u2028b"}'), encode('{"note":"a\u2029b"}'), encode('{"note":"a=b"}')]) {
      expect(mayHaveGsonForm(body)).toBe(true)
      expect(gsonCandidate(body)).toBeDefined()
    }
    expect(mayHaveGsonForm(encode('{"note":"plain"}'))).toBe(false)
  })

  it('makes nothing when more than a fifth of the body would be escaped, so the text stays within twice the body', () => {
    expect(gsonCandidate(encode('<'.repeat(1000)))).toBeUndefined()
    expect(gsonCandidate(encode(`"${'<'.repeat(200)}${'x'.repeat(798)}"`))).toBeDefined()
    expect(gsonCandidate(encode(`"${'<'.repeat(201)}${'x'.repeat(797)}"`))).toBeUndefined()
  })

  it('makes nothing for a body over 64 KiB, so a large hostile body costs no JavaScript pass', () => {
    const text = (size: number) => encode(`{"html":"<b>${'x'.repeat(size - 18)}</b>"}`)
    expect(gsonCandidate(text(64 * 1024))).toBeDefined()
    expect(gsonCandidate(text(64 * 1024 + 1))).toBeUndefined()
  })

  it('counts the escapes wherever they sit: before the first aligned word, in the words, after the last', () => {
    const buffer = new Uint8Array(1100)
    for (const offset of [0, 1, 2, 3]) {
      for (const [escapes, expected] of [
        [200, 'made'],
        [201, 'none'],
      ] as const) {
        // 1000 bytes from `offset`, the escapes at the very start or the very end.
        const atEnd = encode(`"${'x'.repeat(998 - escapes)}${'<'.repeat(escapes)}"`)
        const atStart = encode(`"${'<'.repeat(escapes)}${'x'.repeat(998 - escapes)}"`)
        for (const text of [atEnd, atStart]) {
          buffer.set(text, offset)
          const body = buffer.subarray(offset, offset + text.length)
          expect(gsonCandidate(body) === undefined ? 'none' : 'made', `${escapes} escapes at offset ${offset}`).toBe(expected)
        }
      }
    }
  })

  it('escapes only U+2028 and U+2029 among the characters that start with their lead byte', () => {
    expect(decode(gsonCandidate(encode('"<\u2027\u202A\u2068\u2128"')) as Uint8Array)).toBe('"\\u003c\u2027\u202A\u2068\u2128"')
  })

  it("escapes each of < > & = ' on its own", () => {
    for (const [c, hex] of [
      ['<', '3c'],
      ['>', '3e'],
      ['&', '26'],
      ['=', '3d'],
      ["'", '27'],
    ]) {
      expect(decode(gsonCandidate(encode(`"a${c}b"`)) as Uint8Array)).toBe(`"a\\u00${hex}b"`)
    }
  })

  it('counts U+2028 and U+2029 as escapes too', () => {
    expect(decode(gsonCandidate(encode('"a\u2028b c"')) as Uint8Array)).toBe('"a\\u2028bc"')
  })
})
