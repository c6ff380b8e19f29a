import { sign } from '@hookguard/core'
import { describe, expect, it } from 'vitest'
import { SAMPLE_EVENT_NAMES, sampleEvent } from '../src/samples.ts'
import { serialize } from '../src/serialize.ts'
import { fixtures, serviceVectors, vector } from './helpers.ts'

describe('serialize', () => {
  describe("with the service's own vectors", () => {
    it.each(serviceVectors.map((v) => [v.name, v] as const))('reproduces the body of %s byte for byte from its parsed JSON', (_name, v) => {
      expect(serialize(JSON.parse(v.body))).toBe(v.body)
    })
  })

  describe('with bodies the service did not write itself', () => {
    it('writes a pretty-printed body compactly, as the service sent it (order-paid/pretty-body)', () => {
      expect(serialize(JSON.parse(vector('order-paid/pretty-body').body))).toBe(vector('order-paid').body)
      expect(serialize(JSON.parse(vector('nested-groups/pretty-body').body))).toBe(vector('nested-groups').body)
    })

    it("writes < > & = ' as Gson's escapes where another serialiser left them raw (url-with-query/unescaped-body)", () => {
      expect(serialize(JSON.parse(vector('url-with-query/unescaped-body').body))).toBe(vector('url-with-query').body)
    })

    it("gives the service's signature for every valid vector except the one signed with JavaScript's \\s", async () => {
      const signed = fixtures.vectors.filter((v) => v.valid && v.name !== 'fullwidth-space-in-name/js-strip')
      for (const v of signed) expect(await sign(serialize(JSON.parse(v.body)), v.secret), v.name).toBe(v.signature)
      // That one removed U+3000 before signing; the service keeps it, and so does serialize.
      const jsStrip = vector('fullwidth-space-in-name/js-strip')
      expect(await sign(serialize(JSON.parse(jsStrip.body)), jsStrip.secret)).not.toBe(jsStrip.signature)
    })
  })

  describe("Gson's HTML-safe escapes", () => {
    it("writes < > & = ' as \\u003c \\u003e \\u0026 \\u003d \\u0027", () => {
      expect(serialize({ s: `<a href='x?y=1&z'>` })).toBe('{"s":"\\u003ca href\\u003d\\u0027x?y\\u003d1\\u0026z\\u0027\\u003e"}')
    })

    it('escapes object keys too', () => {
      expect(serialize({ 'a=b': 1 })).toBe('{"a\\u003db":1}')
    })

    it('escapes U+2028 and U+2029', () => {
      expect(serialize(['a\u2028b\u2029c'])).toBe('["a\\u2028b\\u2029c"]')
    })

    it('leaves non-ASCII text, U+3000 and U+00A0 unescaped', () => {
      expect(serialize({ name: '李\u3000雷', note: 'keep\u00A0together', emoji: '🎉' })).toBe(
        '{"name":"李\u3000雷","note":"keep\u00A0together","emoji":"🎉"}',
      )
    })

    it('writes control characters, quotes and backslashes as Gson does', () => {
      expect(serialize({ s: '\t\n\r\b\f\u0001"\\/' })).toBe('{"s":"\\t\\n\\r\\b\\f\\u0001\\"\\\\/"}')
    })
  })

  describe('nulls', () => {
    it('drops object members whose value is null, at any depth', () => {
      expect(serialize({ a: null, b: { c: null, d: 1 }, e: [{ f: null }] })).toBe('{"b":{"d":1},"e":[{}]}')
    })

    it('keeps null elements of an array', () => {
      expect(serialize({ list: [null, false, null] })).toBe('{"list":[null,false,null]}')
    })

    it('drops undefined members, as it drops nulls', () => {
      expect(serialize({ a: undefined, b: 2 })).toBe('{"b":2}')
    })

    it('writes a null payload as the literal null, as toJson(null) does', () => {
      expect(serialize(null)).toBe('null')
    })
  })

  describe('numbers', () => {
    it('writes integers and fractions as Gson writes int, long and fractional double fields', () => {
      expect(serialize({ id: 884211, amount: 1299.5, qty: 2, negative: -0.25 })).toBe(
        '{"id":884211,"amount":1299.5,"qty":2,"negative":-0.25}',
      )
    })

    // Known differences: a JavaScript number does not carry its Java type. Send the text as a
    // string when the exact Gson form of a double matters.
    it('writes a whole double as an integer (Gson writes 1.0)', () => {
      expect(serialize({ price: 1.0 })).toBe('{"price":1}')
    })

    it('writes a double of 10^7 or more without an exponent (Gson writes 1.7E9)', () => {
      expect(serialize({ at: 1.7e9 })).toBe('{"at":1700000000}')
    })
  })

  describe('with values the service could not send', () => {
    it.each([
      ['NaN', { n: Number.NaN }],
      ['Infinity', { n: Number.POSITIVE_INFINITY }],
      ['-Infinity', [Number.NEGATIVE_INFINITY]],
      ['a bigint', { id: 1n }],
      ['undefined', undefined],
      ['a function', () => 1],
    ])('throws a TypeError for %s', (_what, value) => {
      expect(() => serialize(value)).toThrow(TypeError)
      expect(() => serialize(value)).toThrow(/^@hookguard\/emulator: /)
    })

    it('throws a TypeError for a cycle', () => {
      const cyclic: Record<string, unknown> = {}
      cyclic.self = cyclic
      expect(() => serialize(cyclic)).toThrow(/^@hookguard\/emulator: the payload cannot be serialised as JSON/)
    })
  })
})

describe('sampleEvent', () => {
  const samples = [
    ['customer.created', 'customer-created'],
    ['order.paid', 'order-paid'],
    ['link.clicked', 'url-with-query'],
  ] as const

  it.each(samples)('serialises %s to the body of the service vector %s, with its signature', async (name, vectorName) => {
    const v = vector(vectorName)
    const body = serialize(sampleEvent(name))
    expect(body).toBe(v.body)
    expect(await sign(body, v.secret)).toBe(v.signature)
  })

  it('knows exactly those three events', () => {
    expect([...SAMPLE_EVENT_NAMES].sort()).toEqual(samples.map(([name]) => name).sort())
  })

  it('gives customer.created when no name is given', () => {
    expect(sampleEvent()).toEqual(sampleEvent('customer.created'))
    expect(sampleEvent().event).toBe('customer.created')
  })

  it('gives a fresh copy each time, so changing one leaves the next untouched', () => {
    const first = sampleEvent('order.paid') as { data: { amount: number } }
    first.data.amount = 0
    expect((sampleEvent('order.paid') as { data: { amount: number } }).data.amount).toBe(1299.5)
  })

  it('throws a TypeError naming the known events for an unknown name', () => {
    // @ts-expect-error: not a sample event name
    expect(() => sampleEvent('order.refunded')).toThrow(
      /^@hookguard\/emulator: no sample event named "order.refunded"; try customer.created/,
    )
  })
})
