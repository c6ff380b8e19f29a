import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isJsonText, nestsDeeperThan, parseJson } from '../src/json.ts'

const encode = (text: string) => new TextEncoder().encode(text)

describe('parseJson', () => {
  it('parses UTF-8 JSON, and gives the text it decoded', () => {
    const text = '{"名":"值","n":[1,2.5]}'
    expect(parseJson(encode(text), 1000)).toEqual({ value: { 名: '值', n: [1, 2.5] }, text })
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

describe('isJsonText', () => {
  const byParse = (text: string, maxDepth: number) => {
    try {
      JSON.parse(text)
      return !nestsDeeperThan(encode(text), maxDepth)
    } catch {
      return false
    }
  }

  for (const text of [
    '',
    ' ',
    '0',
    '-0',
    '-',
    '01',
    '1.',
    '1.5e',
    '1E+5',
    '1e-5',
    '.5',
    '+1',
    'true',
    'tru',
    'nulll',
    ' [ ] ',
    '[,]',
    '[1,]',
    '{"a":1,}',
    '{"a" : 1 , "b":[{}]}',
    '{1:2}',
    '"\\u00e9"',
    '"\\u00g9"',
    '"\\x"',
    '"a\tb"',
    '"\u007f"',
    '\ufeff{}',
    '{}x',
    '[]]',
    '[[]',
    '"\\/"',
    '{"a"}',
    '{"a":}',
    '\u00a0[]',
    '[1 2]',
    '"\u2028"',
    '[-]',
    '[0e]',
    '{"":""}',
    '[\n\r\t]',
    '\v[]',
    '1e1000',
    '[[[]]]',
    '[[[ ]]]',
    '[[[1],[[]]],[]]',
    '[[[]]]]',
    '[[[]],',
    '[[{"a":[[]]}]]',
    '[1,\n2]',
    '"\u0000"',
  ]) {
    it(`says what JSON.parse says of ${JSON.stringify(text)}`, () => {
      expect(isJsonText(encode(text), 1000)).toBe(byParse(text, 1000))
    })
  }

  it('agrees with JSON.parse and the depth limit on texts made of JSON tokens', () => {
    const token = fc.constantFrom(...'{}[]",:0123456789-+.eEtrufalsn \t\n\r\\/ubx\u00e9\u3000'.split(''))
    fc.assert(
      fc.property(
        fc.array(token, { maxLength: 30 }).map((tokens) => tokens.join('')),
        (text) => isJsonText(encode(text), 3) === byParse(text, 3),
      ),
      { numRuns: 20_000 },
    )
  })

  it('agrees with JSON.parse on JSON values and on them with a character changed', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.nat(), fc.string({ unit: 'grapheme-ascii', maxLength: 2 }), (value, at, inserted) => {
        const text = JSON.stringify(value, null, at % 3)
        const position = at % (text.length + 1)
        const changed = text.slice(0, position) + inserted + text.slice(position + (at % 2))
        return isJsonText(encode(text), 4) === byParse(text, 4) && isJsonText(encode(changed), 4) === byParse(changed, 4)
      }),
      { numRuns: 5_000 },
    )
  })

  it('agrees with JSON.parse and the depth limit on nested values, empty or not, at and past the limit', () => {
    const opener = fc.constantFrom('[', '{"k":', '[0,', '{"a":1,"k":', '[ ')
    const innermost = fc.constantFrom(
      '[]',
      '{}',
      '[ ]',
      '{ }',
      '0',
      '-1.5e3',
      'true',
      'null',
      '""',
      '"\\u00e9\\n"',
      '[[]]',
      '[{}]',
      '{"e":[]}',
    )
    fc.assert(
      fc.property(
        fc.array(opener, { maxLength: 6 }),
        innermost,
        fc.nat(6),
        fc.constantFrom('', ' ', ']', '}', ',', 'x'),
        (openers, inner, maxDepth, tail) => {
          const closers = openers.map((o) => (o.startsWith('[') ? ']' : '}')).reverse()
          const text = `${openers.join('')}${inner}${closers.join('')}`
          const cut = text.slice(0, text.length - (maxDepth % 3))
          return [text, text + tail, cut].every((t) => isJsonText(encode(t), maxDepth) === byParse(t, maxDepth))
        },
      ),
      { numRuns: 3_000 },
    )
  })

  it('agrees with JSON.parse on long runs of tokens broken anywhere', () => {
    const unit = fc.constantFrom(
      '0,',
      '12,',
      '-0.5e+7,',
      '"",',
      '"ab\\"c",',
      'true,',
      'null,',
      'false,',
      '[],',
      '{},',
      '[[0]],',
      '{"a":[{}]},',
      ' \n\t0 ,',
    )
    fc.assert(
      fc.property(
        fc.array(unit, { minLength: 1, maxLength: 200 }),
        fc.nat(),
        fc.constantFrom('', 'x', '0', ']', '}', ' '),
        (units, at, tail) => {
          const text = `[${units.join('')}0]`
          const broken = text.slice(0, at % (text.length + 1)) + tail
          return isJsonText(encode(text), 3) === byParse(text, 3) && isJsonText(encode(broken), 3) === byParse(broken, 3)
        },
      ),
      { numRuns: 2_000 },
    )
  })

  it('refuses in parseJson, untrusted, what JSON.parse refuses, and parses the rest alike', () => {
    for (const text of ['{"a":[1,2,{"b":null}]}', '{"a":[1,2,{"b":null}]}x', '"\\ud800"', '[1e400]']) {
      expect(parseJson(encode(text), 1000, true)).toEqual(parseJson(encode(text), 1000))
    }
    expect(parseJson(new Uint8Array([0x22, 0xff, 0x22]), 1000, true)).toBeUndefined()
    expect(parseJson(encode(`${'['.repeat(6)}${']'.repeat(6)}`), 5, true)).toBeUndefined()
    expect(parseJson(encode(`${'['.repeat(5)}${']'.repeat(5)}`), 5, true)).toEqual(parseJson(encode(`${'['.repeat(5)}${']'.repeat(5)}`), 5))
  })
})
