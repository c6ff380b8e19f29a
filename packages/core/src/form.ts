import { decodeUtf8, indexOfByte, occursMoreThan } from './bytes.ts'
import { WebhookError } from './errors.ts'
import type { WebhookRequest } from './request.ts'

/**
 * The most fields a form-urlencoded delivery may hold (a token sent as a form field): body-parser's
 * default `parameterLimit`. A form with more is answered 400 `invalid_body`, counted before
 * anything of it is decoded.
 */
export const MAX_FORM_FIELDS = 1000

const AMPERSAND = 0x26
const EQUALS = 0x3d
const PLUS = 0x2b
const PERCENT = 0x25
const SPACE = 0x20

/** Whether the request says its body is a form (the token address, a token sent as a form field). */
export function isFormUrlEncoded(request: WebhookRequest): boolean {
  const type = request.header('content-type')
  // Stryker disable next-line ConditionalExpression: equivalent — a RegExp tests null as the text "null", which this one refuses
  return type !== null && /^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)
}

/**
 * Whether a form (a body, or a query string) has more than `limit` fields, counted as its
 * `&`-separated parts, as body-parser counts them: one byte searched for, bounded by the limit,
 * before anything is decoded or parsed.
 */
export function hasMoreFieldsThan(form: Uint8Array | string, limit: number): boolean {
  if (typeof form !== 'string') return occursMoreThan(form, [AMPERSAND], limit - 1)
  let separators = 0
  for (let at = form.indexOf('&'); at !== -1; at = form.indexOf('&', at + 1)) {
    if (++separators >= limit) return true
  }
  return false
}

/** The fields of a form-urlencoded body; `invalid_body` when it is not UTF-8. */
export function parseForm(body: Uint8Array): URLSearchParams {
  try {
    return new URLSearchParams(decodeUtf8(body))
  } catch {
    // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
    throw new WebhookError('invalid_body', 'The form body is not valid UTF-8.')
  }
}

/**
 * The value of the field `name` in a form body, `null` when it has none, or
 * {@link REPEATED_FIELD} when it has it more than once, read from the
 * raw bytes in one pass that decodes nothing but the parts that could be that field: a token sent
 * as a form field is found, and checked, before the form is parsed.
 *
 * A field is read as `URLSearchParams` reads it (WHATWG `application/x-www-form-urlencoded`):
 * parts split at `&`, the name up to the first `=`, `+` a space, `%` and two hex digits a byte.
 * `name` is ASCII, without `&`, `=`, `+` or `%`. `undefined` when its value takes more than
 * `maxValueBytes` bytes as sent: too long to be what is looked for, so it is not decoded.
 */
export function formField(
  body: Uint8Array,
  name: string,
  maxValueBytes = Number.POSITIVE_INFINITY,
): string | null | undefined | typeof REPEATED_FIELD {
  const end = body.length
  let seen = false
  let value: string | undefined
  // Stryker disable next-line EqualityOperator: equivalent — an empty part past the end matches no name
  for (let start = 0; start < end; ) {
    const nameEnd = matchName(body, start, end, name)
    const partEnd = nextAmpersand(body, start, end)
    if (nameEnd !== -1) {
      // Read to the end: which of two values counts is not for the form's order to decide.
      if (seen) return REPEATED_FIELD
      seen = true
      if (partEnd - nameEnd - 1 <= maxValueBytes) value = nameEnd === partEnd ? '' : decodeFormValue(body, nameEnd + 1, partEnd)
    }
    start = partEnd + 1
  }
  return seen ? value : null
}

/** What {@link formField} answers for a field the form holds more than once. */
export const REPEATED_FIELD: unique symbol = Symbol('repeated field')

/**
 * Whether the part at `start` is named `name`: where its name ends (its `=`, or the end of the
 * part) when it is, -1 when it is not. Reads only up to the first byte that differs.
 */
function matchName(body: Uint8Array, start: number, end: number, name: string): number {
  let i = start
  for (let matched = 0; matched < name.length; matched++, i++) {
    // `name` holds no `&`, `=`, `+` (a space) or `%`, so each of them, raw, is a mismatch, and so
    // is a broken escape (-1) and a byte past the end (undefined).
    let byte = body[i]
    if (byte === PERCENT) {
      byte = hexPair(body[i + 1], body[i + 2])
      i += 2
    }
    if (byte !== name.charCodeAt(matched)) return -1
  }
  return i === end || body[i] === AMPERSAND || body[i] === EQUALS ? i : -1
}

/** The index of the next `&` from `from`, or `end`. */
function nextAmpersand(body: Uint8Array, from: number, end: number): number {
  // The parts of a form are mostly short: a few bytes are read here, cheaper than a native call;
  // a long part is searched natively.
  // Stryker disable next-line MethodExpression: speed only — a longer near scan finds the same `&`
  const near = Math.min(end, from + 32)
  // Stryker disable next-line EqualityOperator: speed only — one byte more of the near scan finds the same `&`
  for (let i = from; i < near; i++) if (body[i] === AMPERSAND) return i
  // Stryker disable next-line ConditionalExpression: speed only — searched natively from the end, nothing is found
  if (near === end) return end
  const at = indexOfByte(body, AMPERSAND, near)
  return at === -1 ? end : at
}

/** `+` as a space, `%XX` as a byte, then UTF-8 as URLSearchParams decodes it (malformed sequences as U+FFFD). */
function decodeFormValue(body: Uint8Array, start: number, end: number): string {
  // Stryker disable next-line ArithmeticOperator: equivalent — a larger buffer, cut to the length written
  const bytes = new Uint8Array(end - start)
  let length = 0
  for (let i = start; i < end; i++) {
    const byte = body[i] as number
    let decoded = byte === PLUS ? SPACE : byte
    if (byte === PERCENT) {
      // An escape cut short by the part's end reads its `&` (or, at the body's end, undefined): not a hex digit.
      const escaped = hexPair(body[i + 1], body[i + 2])
      if (escaped >= 0) {
        decoded = escaped
        i += 2
      }
    }
    bytes[length++] = decoded
  }
  return lenientUtf8.decode(bytes.subarray(0, length))
}

// "UTF-8 decode without BOM": a leading BOM is kept, as URLSearchParams keeps it.
const lenientUtf8 = new TextDecoder('utf-8', { ignoreBOM: true })

/** The byte two hex digits (either case) spell, or a negative number. */
function hexPair(high: number | undefined, low: number | undefined): number {
  // Either digit -1 makes the pair negative: -1 << 4 sets the sign bit, and `| -1` sets every bit.
  return ((HEX_DIGITS[high as number] ?? -1) << 4) | (HEX_DIGITS[low as number] ?? -1)
}

/** The value of each byte as a hex digit, -1 for a byte that is none. */
const HEX_DIGITS = new Int8Array(256).fill(-1)
for (let digit = 0; digit < 16; digit++) {
  const text = digit.toString(16)
  HEX_DIGITS[text.charCodeAt(0)] = digit
  HEX_DIGITS[text.toUpperCase().charCodeAt(0)] = digit
}

/**
 * A form's fields as an object, in one pass over them; a repeated field becomes an array, and the
 * field `omit` (the `access_token` that authenticated it) is left out. Each field is defined as an
 * own property, as `JSON.parse` does, so a field named `__proto__` is data, not the object's
 * prototype (an assignment would hand the handler an object whose `hasOwnProperty` is an array's).
 */
export function formPayload(form: URLSearchParams, omit?: string): Record<string, string | string[]> {
  const payload: Record<string, string | string[]> = {}
  for (const [key, value] of form) {
    if (key === omit) continue
    if (!Object.hasOwn(payload, key)) {
      define(payload, key, value)
      continue
    }
    const earlier = payload[key] as string | string[]
    // Values are strings: an array is one this loop made.
    if (typeof earlier === 'string') define(payload, key, [earlier, value])
    else earlier.push(value)
  }
  return payload
}

function define(payload: Record<string, string | string[]>, key: string, value: string | string[]): void {
  Object.defineProperty(payload, key, { value, enumerable: true, writable: true, configurable: true })
}
