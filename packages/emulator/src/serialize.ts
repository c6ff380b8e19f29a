import { escapeLikeGson } from '@hookguard/core/adapter'

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * The JSON text the service would put on the wire for `value`: what Gson's default `toJson`
 * writes.
 *
 * - `< > & = '` and U+2028, U+2029 are written as `\u003c`-style escapes (Gson's HTML-safe
 *   default), in keys and values alike.
 * - Object members whose value is `null` (or `undefined`) are left out; `null` in an array stays.
 * - Compact: no whitespace between tokens.
 *
 * Numbers are written as JavaScript writes them, which is what Gson writes for `int` and `long`
 * fields and for most `double`s with a fraction. A JavaScript number does not know its Java type,
 * so a whole `double` (Gson: `1.0`), a `double` of 10⁷ or more (Gson: `1.7E9`) and a `long`
 * beyond 2⁵³ cannot be reproduced from a value; pass the exact JSON text as a string to
 * {@link deliver} for those.
 *
 * @throws TypeError for what Gson refuses or JSON cannot hold: `NaN`, `±Infinity`, a `bigint`,
 *   a cycle, or a value with no JSON form (`undefined`, a function, a symbol).
 *
 * @example
 * serialize({ url: 'https://shop.example.com/p?id=42&utm=x', note: null })
 * // '{"url":"https://shop.example.com/p?id\\u003d42\\u0026utm\\u003dx"}'
 */
export function serialize(value: unknown): string {
  // Gson's `toJson(null)` writes the literal; JSON.stringify would return undefined through the
  // replacer below, which drops nulls.
  if (value === null) return 'null'
  let text: string | undefined
  try {
    text = JSON.stringify(value, gsonMember)
  } catch (error) {
    if (error instanceof TypeError && error.message.startsWith('@hookguard/emulator:')) throw error
    throw new TypeError(`@hookguard/emulator: the payload cannot be serialised as JSON (${(error as Error).message})`, { cause: error })
  }
  if (text === undefined)
    throw new TypeError('@hookguard/emulator: the payload has no JSON form; pass an object, an array or a JSON string')
  const escaped = escapeLikeGson(encoder.encode(text))
  return escaped === undefined ? text : decoder.decode(escaped)
}

function gsonMember(this: unknown, _key: string, value: unknown): unknown {
  // Gson's JsonWriter has serializeNulls off by default: it skips the member, name and all. An
  // array element has no name to skip, so it is written as null.
  if (value === null && !Array.isArray(this)) return undefined
  if (typeof value === 'number' && !Number.isFinite(value)) {
    // Gson throws IllegalArgumentException here (serializeSpecialFloatingPointValues is off);
    // JSON.stringify would quietly write null, a body the service never sends.
    throw new TypeError(`@hookguard/emulator: the payload holds ${value}, which the service's serialiser (Gson) refuses`)
  }
  if (typeof value === 'bigint') {
    throw new TypeError('@hookguard/emulator: the payload holds a bigint; to send an exact large integer, pass the JSON text as a string')
  }
  return value
}
