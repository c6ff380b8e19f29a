/**
 * Bodies built to make a refusal expensive, exactly `size` bytes each, from a fixed seed: what the
 * complexity test (test/robustness/complexity.test.ts) and the adversarial benchmark
 * (bench/adversarial.ts) send to every entry point. One table, so a shape added here is measured
 * by both.
 *
 * Portable (no Node APIs, erasable TypeScript only), like payload.ts.
 */
import { makePayload, random } from './payload.ts'

export interface HostileShape {
  id: string
  label: string
  /** False for the ordinary deliveries kept for reference. */
  hostile: boolean
  /** Exactly `size` bytes. */
  build(size: number): Uint8Array
}

const encoder = new TextEncoder()

/** `unit` repeated to exactly `size` bytes; the last few bytes, where a unit no longer fits, are `x`. */
export function repeated(unit: string, size: number): Uint8Array {
  const bytes = encoder.encode(unit)
  const out = new Uint8Array(size).fill(0x78)
  for (let i = 0; i + bytes.length <= size; i += bytes.length) out.set(bytes, i)
  return out
}

/**
 * `head`, then as many whole `unit`s as fit, then `filler` to make up the size (a space keeps JSON
 * valid between tokens), then `tail`: exactly `size` bytes.
 */
function framed(head: string, unit: string, tail: string, size: number, filler = ' '): Uint8Array {
  const [start, middle, end] = [head, unit, tail].map((text) => encoder.encode(text)) as [Uint8Array, Uint8Array, Uint8Array]
  const body = new Uint8Array(size).fill(filler.charCodeAt(0))
  body.set(start)
  const room = size - start.length - end.length
  for (let at = start.length; at + middle.length <= start.length + room; at += middle.length) body.set(middle, at)
  body.set(end, size - end.length)
  return body
}

/**
 * Gson's five HTML escapes, one every fifth byte between letters: the most escapes the bound on
 * the Gson fallback lets through (it refuses more than a fifth of the body), so its copy is built
 * at its largest, twice the body.
 */
function escapesAtAFifth(size: number): Uint8Array {
  const out = new Uint8Array(size).fill(0x61)
  const escaped = encoder.encode(`<>&='`)
  for (let i = 4, k = 0; i < size; i += 5, k++) out[i] = escaped[k % escaped.length] as number
  return out
}

/** Every character one of the signature fallbacks looks for, and some it does not, in a seeded random order. */
const MIX_UNITS = [
  ...`<>&='`,
  ...'\u2028\u2029\u3000\u00a0\ufeff\u0085\u1680\u2000\u200a\u202f\u205f\u001c\u001f',
  ...' \t\n\r\v\f',
  ...'a"\\é中',
].map((unit) => encoder.encode(unit))

function mix(size: number): Uint8Array {
  const next = random(size)
  const out = new Uint8Array(size).fill(0x78)
  for (let n = 0; ; ) {
    const unit = MIX_UNITS[Math.floor(next() * MIX_UNITS.length)] as Uint8Array
    if (n + unit.length > size) break
    out.set(unit, n)
    n += unit.length
  }
  return out
}

/** Parts of `&`-separated text until `size` bytes, padded with `x`: `part(i)` for the i-th. */
function parts(size: number, part: (i: number) => string, separator = '&'): Uint8Array {
  let text = ''
  for (let i = 0; text.length < size; i++) text += (i === 0 ? '' : separator) + part(i)
  return encoder.encode(text.slice(0, size))
}

/** The default `maxDepth`. */
const MAX_DEPTH = 1000

/** Arrays nested exactly `MAX_DEPTH` deep, side by side in one array: valid, and as deep as allowed everywhere. */
function nestedWithin(size: number): Uint8Array {
  return framed('[', `${'['.repeat(MAX_DEPTH - 1)}${']'.repeat(MAX_DEPTH - 1)},`, '0]', size)
}

/**
 * `[[[…]]]`, valid JSON thousands of levels past `MAX_DEPTH`: V8's `JSON.parse` takes it, and
 * `JSON.stringify` (or any recursive walk) of the value then overflows the stack, at some cost
 * before it does.
 */
function deepest(size: number): Uint8Array {
  const depth = Math.floor(size / 2)
  return encoder.encode(`${'['.repeat(depth)}${']'.repeat(depth)}${' '.repeat(size % 2)}`)
}

/** A long string of brackets (which do not count), then arrays nested past `MAX_DEPTH` at the very end. */
function nestedPast(size: number): Uint8Array {
  return framed('["', '[{', `",${'['.repeat(MAX_DEPTH + 1)}`, size, 'x')
}

export const HOSTILE_SHAPES: readonly HostileShape[] = [
  {
    id: 'compact',
    label: 'ordinary delivery, compact (reference)',
    hostile: false,
    build: (size) => makePayload('compact', size, '').bytes,
  },
  { id: 'pretty', label: 'ordinary delivery, pretty (reference)', hostile: false, build: (size) => makePayload('pretty', size, '').bytes },
  { id: 'lt', label: 'all `<`', hostile: true, build: (size) => repeated('<', size) },
  { id: 'escapes', label: "`< > & = '`, a fifth of the bytes (the most the Gson bound admits)", hostile: true, build: escapesAtAFifth },
  { id: 'u2028', label: 'all U+2028', hostile: true, build: (size) => repeated('\u2028', size) },
  { id: 'u3000', label: 'all U+3000', hostile: true, build: (size) => repeated('\u3000', size) },
  { id: 'spaces', label: 'all spaces', hostile: true, build: (size) => repeated(' ', size) },
  { id: 'mix', label: 'a mix of escapes, Unicode and Java whitespace, letters', hostile: true, build: mix },
  { id: 'lt-u3000', label: '`<`, U+3000 and spaces, at random', hostile: true, build: ltAndSpaces },
  { id: 'fields', label: 'form: many distinct fields', hostile: true, build: (size) => parts(size, (i) => `f${i.toString(36)}=1`) },
  { id: 'repeated', label: 'form: one field repeated', hostile: true, build: (size) => parts(size, () => 'a=1') },
  {
    id: 'near-token',
    label: 'form: escaped names one letter short of `access_token`',
    hostile: true,
    build: (size) => parts(size, () => '%61ccess%5Ftoke%6D=%41%42'),
  },
  {
    id: 'long-token',
    label: 'form: one `access_token` field as long as the body, percent-encoded',
    hostile: true,
    build: (size) => framed('access_token=', '%41', '', size, 'A'),
  },
  { id: 'keys', label: 'JSON: many distinct keys', hostile: true, build: keys },
  { id: 'repeated-keys', label: 'JSON: one key repeated', hostile: true, build: (size) => framed('{"a":0', ',"a":0', '}', size) },
  { id: 'nested', label: `JSON: nesting ${MAX_DEPTH} deep, as deep as maxDepth allows`, hostile: true, build: nestedWithin },
  {
    id: 'nested-broken',
    label: `JSON: nesting ${MAX_DEPTH} deep, broken at the last byte`,
    hostile: true,
    build: (size) => brokenAtTheEnd(nestedWithin(size)),
  },
  {
    id: 'objects-broken',
    label: 'JSON: an array of small objects, broken at the last byte',
    hostile: true,
    build: (size) => framed('[', '{"a":0},', '{}x', size),
  },
  {
    id: 'zeros-broken',
    label: 'JSON: an array of zeros, broken at the last byte',
    hostile: true,
    build: (size) => framed('[', '0,', '0x', size),
  },
  {
    id: 'empties-broken',
    label: 'JSON: an array of empty arrays and objects, broken at the last byte',
    hostile: true,
    build: (size) => framed('[', '[],{},', '{}x', size),
  },
  { id: 'too-deep', label: `JSON: a string of brackets, then nesting past maxDepth`, hostile: true, build: nestedPast },
  { id: 'deepest', label: 'JSON: arrays nested as deep as the body is long, valid', hostile: true, build: deepest },
  { id: 'long-string', label: 'JSON: one long string', hostile: true, build: (size) => framed('{"a":"', 'x', '"}', size, 'x') },
  {
    id: 'json-escapes',
    label: 'JSON: a string of `\\u` escapes',
    hostile: true,
    build: (size) => framed('["', '\\u00e9', '"]', size, 'x'),
  },
]

/** `body` with its last byte made `x`: JSON up to there, then not (what mode `none` refuses last). */
function brokenAtTheEnd(body: Uint8Array): Uint8Array {
  body[body.length - 1] = 0x78
  return body
}

/** `<`, U+3000 and ASCII spaces in a seeded random order: the Unicode-whitespace form at its dearest. */
function ltAndSpaces(size: number): Uint8Array {
  const units = ['<', '\u3000', ' '].map((unit) => encoder.encode(unit))
  const next = random(size)
  const out = new Uint8Array(size).fill(0x20)
  for (let n = 0; ; ) {
    const unit = units[Math.floor(next() * units.length)] as Uint8Array
    if (n + unit.length > size) break
    out.set(unit, n)
    n += unit.length
  }
  return out
}

/** A JSON object with as many distinct keys as fit. */
function keys(size: number): Uint8Array {
  const body = parts(size - 2, (i) => `"k${i.toString(36)}":0`, ',')
  // A key cut short at the end would leave the object invalid: end at the last whole member.
  let end = body.length
  while (end > 0 && body[end - 1] !== 0x30) end--
  const out = new Uint8Array(size).fill(0x20)
  out[0] = 0x7b
  out.set(body.subarray(0, end), 1)
  out[size - 1] = 0x7d
  return out
}

export function hostileShape(id: string): HostileShape {
  const shape = HOSTILE_SHAPES.find((s) => s.id === id)
  if (shape === undefined) throw new Error(`no hostile shape ${id}`)
  return shape
}
