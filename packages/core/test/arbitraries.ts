import fc from 'fast-check'

/** The surrogates, U+D800 to U+DFFF: no code point of its own. */
const SURROGATES = 0xe000 - 0xd800

/**
 * Any one code point but a surrogate, drawn and shrunk as `fc.string({ unit: 'binary', minLength:
 * 1, maxLength: 1 })` draws it (an index below the surrogates or past them). Written out because
 * that string arbitrary maps all 1.1 million code points back to their index when it is made,
 * about a second of CPU in every worker that imports this file.
 */
const codePoint: fc.Arbitrary<string> = fc.nat({ max: 0x10ffff - SURROGATES }).map(
  (index) => String.fromCodePoint(index < 0xd800 ? index : index + SURROGATES),
  (value) => {
    const code = typeof value === 'string' ? value.codePointAt(0) : undefined
    if (code === undefined || String.fromCodePoint(code) !== value || (code >= 0xd800 && code < 0xe000)) {
      throw new Error('not one code point')
    }
    return code < 0xd800 ? code : code - SURROGATES
  },
)

/**
 * One character of text for property tests: any Unicode code point (astral ones included), or
 * one of the whitespace characters that Java's `\s` does not match but Unicode does (U+00A0,
 * U+3000, U+FEFF, U+2028, U+0085, …), often right next to an ASCII space, so that a canonical
 * form that strips one byte too many or too few is seen.
 */
export const unicodeUnit: fc.Arbitrary<string> = fc.oneof(
  codePoint,
  fc.constantFrom('\u00A0', '\u3000', '\uFEFF', '\u2028', '\u2029', '\u0085', '\u1680', '\u2007', '\u202F'),
  fc.constantFrom(' \u00A0', '\u3000 ', ' \uFEFF ', '\u2028 ', ' \u0085', 'a \u00A0b'),
  fc.constantFrom(' ', '\t', '\n', '\r'),
)

/** Full-Unicode strings, whitespace of every kind included. */
export const unicodeString = (constraints: { minLength?: number; maxLength?: number } = {}) =>
  fc.string({ unit: unicodeUnit, ...constraints })

/** JSON values whose strings and keys are drawn from full Unicode, not ASCII only. */
export const unicodeJsonValue = (): fc.Arbitrary<fc.JsonValue> => fc.jsonValue({ stringUnit: unicodeUnit })
