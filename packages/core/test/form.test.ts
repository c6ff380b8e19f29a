import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { formField, formPayload, hasMoreFieldsThan, MAX_FORM_FIELDS, parseForm, REPEATED_FIELD } from '../src/form.ts'

const encode = (text: string) => new TextEncoder().encode(text)

/** Form text made of the pieces that matter to the parser: separators, escapes (good and broken), the name looked for. */
const formText = fc
  .array(
    fc.constantFrom(
      '&',
      '=',
      '+',
      '%',
      '%5F',
      '%5f',
      '%2',
      '%zz',
      '%26',
      '%3D',
      '%C3%A9',
      '%FF',
      'a',
      '_',
      'access',
      'access_token',
      'acces',
      '%61',
      'é',
      '\u2028',
      ' ',
      '\ufeff',
      '%EF%BB%BF',
      // Escapes at the edges of what a hex digit is: NUL, and the bytes beside 0-9, A-F and a-f.
      '%00',
      '%@1',
      '%`1',
      '%/0',
      '%:0',
      '%G0',
      '%g0',
      '%4',
    ),
    { maxLength: 24 },
  )
  .map((parts) => parts.join(''))

/**
 * The WHATWG form parser's reading of `text`. Not `new URLSearchParams(text)`: Node's own parser
 * turns a raw non-ASCII character into U+FFFD in a value that holds both a valid and an invalid
 * escape (`a=%zz%5Fé` reads `%zz_�`). A URL's query has its non-ASCII characters escaped first,
 * which the form parser then decodes as the standard says. Spaces are escaped too: a URL drops
 * them at its ends.
 */
const standardForm = (text: string) => new URL(`http://localhost/?${text.replaceAll(' ', '%20')}`).searchParams

describe('formField', () => {
  it('reads the value of a field as the WHATWG form parser does, and tells a field sent twice', () => {
    fc.assert(
      fc.property(formText, (text) => {
        const values = standardForm(text).getAll('access_token')
        expect(formField(encode(text), 'access_token')).toBe(values.length > 1 ? REPEATED_FIELD : (values[0] ?? null))
      }),
      { numRuns: 5000 },
    )
  })

  it('answers null for a form without the field, and an empty string for the name alone', () => {
    expect(formField(encode(''), 'access_token')).toBeNull()
    expect(formField(encode('a=1&b=2&'), 'access_token')).toBeNull()
    expect(formField(encode('access_token'), 'access_token')).toBe('')
    expect(formField(encode('access_token&access_token=x'), 'access_token')).toBe(REPEATED_FIELD)
    expect(formField(encode('access_token=x&a=1&access_token=x'), 'access_token')).toBe(REPEATED_FIELD)
    expect(formField(encode('access_token=x&%61ccess_token=y'), 'access_token')).toBe(REPEATED_FIELD)
  })
})

describe('parseForm', () => {
  it('refuses a form that is not UTF-8 as invalid_body', () => {
    expect(() => parseForm(new Uint8Array([0x61, 0x3d, 0xff]))).toThrow(expect.objectContaining({ code: 'invalid_body' }))
  })
})

describe('formField with a bound on the value', () => {
  it('answers undefined, without decoding, for a value longer as sent than the bound; the value itself within it', () => {
    const form = encode('a=1&access_token=%41%42%43&b=2')
    expect(formField(form, 'access_token', 9)).toBe('ABC')
    expect(formField(form, 'access_token', 8)).toBeUndefined()
    expect(formField(form, 'missing', 1)).toBeNull()
    expect(formField(encode(`access_token=${'A'.repeat(20)}&access_token=B`), 'access_token', 9)).toBe(REPEATED_FIELD)
  })
})

describe('hasMoreFieldsThan', () => {
  it("counts a form's &-separated parts, empty ones too, as body-parser counts them", () => {
    const fields = (count: number) => Array.from({ length: count }, (_, i) => `f${i}=${i}`).join('&')
    for (const form of [fields(MAX_FORM_FIELDS), encode(fields(MAX_FORM_FIELDS))])
      expect(hasMoreFieldsThan(form, MAX_FORM_FIELDS)).toBe(false)
    for (const form of [fields(MAX_FORM_FIELDS + 1), `${fields(MAX_FORM_FIELDS)}&`, encode(`&${fields(MAX_FORM_FIELDS)}`)]) {
      expect(hasMoreFieldsThan(form, MAX_FORM_FIELDS)).toBe(true)
    }
    expect(hasMoreFieldsThan('', 1)).toBe(false)
    expect(hasMoreFieldsThan('a&b', 2)).toBe(false)
    expect(hasMoreFieldsThan(encode('a&b&c'), 2)).toBe(true)
  })
})

describe('formPayload', () => {
  it('matches the fields URLSearchParams reads, a repeated one as an array, the omitted one left out', () => {
    fc.assert(
      fc.property(formText, (text) => {
        const form = new URLSearchParams(text)
        const expected: Record<string, string | string[]> = {}
        for (const key of new Set(form.keys())) {
          if (key === 'access_token') continue
          const values = form.getAll(key)
          Object.defineProperty(expected, key, { value: values.length === 1 ? values[0] : values, enumerable: true })
        }
        const payload = formPayload(form, 'access_token')
        expect(Object.entries(payload)).toEqual(Object.entries(expected))
        expect(Object.getPrototypeOf(payload)).toBe(Object.prototype)
      }),
      { numRuns: 500 },
    )
  })
})
