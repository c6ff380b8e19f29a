import { decodeUtf8, occursMoreThan } from './bytes.ts'

const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
const CLOSE_OBJECT = 0x7d
const CLOSE_ARRAY = 0x5d
const OPENERS = [OPEN_OBJECT, OPEN_ARRAY]
const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * Whether the JSON text nests objects and arrays deeper than `maxDepth`.
 *
 * V8's `JSON.parse` accepts 100 000 nested arrays, but the value it returns overflows the stack
 * of `JSON.stringify` and of any recursive code the application runs on it, so the limit has to
 * be enforced before parsing. Brackets inside strings do not count.
 */
export function nestsDeeperThan(bytes: Uint8Array, maxDepth: number): boolean {
  // A valid document needs two bytes per level; anything shorter that still claims the depth is
  // unterminated, and JSON.parse rejects it without recursing.
  // Stryker disable next-line ConditionalExpression,ArithmeticOperator: speed only — a lower threshold only scans more (→ true and <= are killed)
  if (bytes.length < 2 * (maxDepth + 1)) return false
  // Nor can a document with no more brackets than the limit, counted by memchr without looking
  // at strings: far cheaper than the scan below, which a typical delivery then never runs.
  // Stryker disable next-line ConditionalExpression: speed only — without it the scan below decides (→ true is killed)
  if (!occursMoreThan(bytes, OPENERS, maxDepth)) return false
  let depth = 0
  let inString = false
  // Stryker disable next-line EqualityOperator: equivalent — the byte past the end is undefined and matches no bracket
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]
    if (inString) {
      if (b === BACKSLASH) i++
      else if (b === QUOTE) inString = false
    } else if (b === QUOTE) {
      inString = true
    } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
      if (++depth > maxDepth) return true
    } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
      depth--
    }
  }
  return false
}

// isJsonText's automaton: RFC 8259's grammar as a table. A state is a row of 256 entries, one per
// byte: the next state, or one of the actions below for the bytes that need more than a look-up
// (brackets, which use the nesting stack; escapes; literals; runs) or end the text (FAIL). What
// may follow a value depends on what encloses it (nothing, an object, an array: whether a comma
// leads to a key or a value, which bracket closes), so a value's states are built once per
// enclosing kind: a comma, and the end of a number or string, are then plain transitions.
//
// Why a table: the pass before it read a token at a time with a function per kind of token, tens
// of instructions a token, and the densest texts (`[0,0,…`, `[{"a":0},…`) cost up to 16 HMACs of
// their bytes; a look-up a byte costs about the same whatever the text holds.
const RUN = 0xfff0
const ESCAPE = 0xfff1
const LITERAL = 0xfff2
const CLOSE = 0xfff3
const OPEN_ARRAY_ACTION = 0xfff4
const OPEN_OBJECT_ACTION = 0xfff5
const FAIL = 0xffff

const rows: Uint16Array[] = []
const newState = (): number => rows.push(new Uint16Array(256).fill(FAIL)) - 1
const row = (state: number): Uint16Array => rows[state] as Uint16Array
const set = (state: number, bytes: string, next: number): void => {
  for (const c of bytes) row(state)[c.charCodeAt(0)] = next
}

/** JSON's four whitespace characters (RFC 8259 §2; what `JSON.parse` skips). */
const SPACE = ' \t\n\r'
const DIGITS = '0123456789'

/** A string's content, its opening quote read; `after` is where its closing quote leads. */
function stringState(after: number): number {
  const content = newState()
  // Bytes >= 0x80 pass; whether they are UTF-8 is the decoder's question. Control characters fail.
  row(content).fill(content, 0x20)
  set(content, '"', after)
  set(content, '\\', ESCAPE)
  return content
}

const [AFTER_TOP, AFTER_IN_OBJECT, AFTER_IN_ARRAY] = [newState(), newState(), newState()] as const
const [VALUE_AT_TOP, VALUE_IN_OBJECT, VALUE_IN_ARRAY] = [newState(), newState(), newState()] as const
const [OBJECT_OPENED, KEY, COLON, ARRAY_OPENED] = [newState(), newState(), newState(), newState()] as const
const KEY_STRING = stringState(COLON)
set(COLON, SPACE, COLON)
set(COLON, ':', VALUE_IN_OBJECT)
set(KEY, SPACE, KEY)
set(KEY, '"', KEY_STRING)
set(OBJECT_OPENED, SPACE, OBJECT_OPENED)
set(OBJECT_OPENED, '"', KEY_STRING)
set(OBJECT_OPENED, '}', CLOSE)

for (const after of [AFTER_TOP, AFTER_IN_OBJECT, AFTER_IN_ARRAY]) set(after, SPACE, after)
set(AFTER_IN_OBJECT, ',', KEY)
set(AFTER_IN_OBJECT, '}', CLOSE)
set(AFTER_IN_ARRAY, ',', VALUE_IN_ARRAY)
set(AFTER_IN_ARRAY, ']', CLOSE)

/** The states where the text may end: after a value at the top, a number's end included. */
const ENDS = [AFTER_TOP]

for (const [value, after] of [
  [VALUE_AT_TOP, AFTER_TOP],
  [VALUE_IN_OBJECT, AFTER_IN_OBJECT],
  [VALUE_IN_ARRAY, AFTER_IN_ARRAY],
] as const) {
  // A number (RFC 8259 §6): where one may end, any other byte is read as it would be after it.
  const [minus, zero, integer, point, fraction, exponent, sign, power] = Array.from({ length: 8 }, newState) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ]
  for (const last of [zero, integer, fraction, power]) {
    row(last).set(row(after))
    if (after === AFTER_TOP) ENDS.push(last)
  }
  set(value, SPACE, value)
  set(value, '-', minus)
  for (const from of [value, minus]) {
    set(from, '0', zero)
    set(from, '123456789', integer)
  }
  set(integer, DIGITS, integer)
  for (const from of [zero, integer]) set(from, '.', point)
  set(point, DIGITS, fraction)
  set(fraction, DIGITS, fraction)
  for (const from of [zero, integer, fraction]) set(from, 'eE', exponent)
  set(exponent, '+-', sign)
  for (const from of [exponent, sign, power]) set(from, DIGITS, power)

  set(value, '"', stringState(after))
  set(value, 'tfn', LITERAL)
  set(value, '{', OPEN_OBJECT_ACTION)
  set(value, '[', OPEN_ARRAY_ACTION)
}
// After `[`: a value or `]`, but never a comma.
row(ARRAY_OPENED).set(row(VALUE_IN_ARRAY))
set(ARRAY_OPENED, SPACE, ARRAY_OPENED)
set(ARRAY_OPENED, ']', CLOSE)

// A byte that leaves its state as it is makes a run: whitespace, a string's content, a number's
// digits. RUN stands for it, and the loop reads the rest of the run without waiting on the state.
// A number's first repetition leads to a twin state whose own are RUN instead, so that the short
// numbers of dense JSON (`[0,12,…`) take no action at all.
const BUILT = rows.length
for (let state = 0; state < BUILT; state++) {
  const repeats = [...row(state).keys()].filter((b) => row(state)[b] === state)
  if (repeats.length === 0) continue
  const twin = repeats.includes(0x30) ? newState() : RUN
  if (twin !== RUN) {
    row(twin).set(row(state))
    for (const b of repeats) row(twin)[b] = RUN
    if (ENDS.includes(state)) ENDS.push(twin)
  }
  for (const b of repeats) row(state)[b] = twin
}

/**
 * Row after row, each state named by where its row starts (its number times 256), so that the
 * next state of `state` on byte `b` is at `state + b`: one addition between two look-ups.
 */
if (rows.length << 8 > RUN) throw new Error('json: more states than a 16-bit entry can name')
const TRANSITIONS = new Uint16Array(rows.length << 8)
for (const [state, entries] of rows.entries()) {
  for (const [b, next] of entries.entries()) TRANSITIONS[(state << 8) | b] = next < rows.length ? next << 8 : next
}
const ENDING = new Uint8Array(rows.length)
for (const state of ENDS) ENDING[state] = 1

/** The letters of the three literals after their first. */
const [REST_OF_TRUE, REST_OF_FALSE, REST_OF_NULL] = ['rue', 'alse', 'ull'].map((rest) => new TextEncoder().encode(rest)) as [
  Uint8Array,
  Uint8Array,
  Uint8Array,
]

/** 1 for the characters a backslash may stand before, but `u`. */
const SHORT_ESCAPE = new Uint8Array(256)
for (const c of '"\\/bfnrt') SHORT_ESCAPE[c.charCodeAt(0)] = 1

const HEX_DIGIT = new Uint8Array(256)
for (const c of '0123456789abcdefABCDEF') HEX_DIGIT[c.charCodeAt(0)] = 1

/**
 * Whether the bytes are one JSON text (RFC 8259, as `JSON.parse` reads it) nesting no deeper than
 * `maxDepth`, told from the bytes without decoding them; UTF-8 validity is left to the decoder.
 *
 * For a body that nothing authenticated (mode `none`), where refusing it must stay cheap: decoding
 * 1 MiB to a string costs V8 several HMACs of the same bytes (about ten for text outside Latin-1),
 * and `JSON.parse` of a text that is valid up to its last byte costs up to a couple of hundred; a
 * body this says no to is refused before either. One iterative pass over the automaton above: a
 * table look-up a byte, and a little more at brackets, escapes, literals and runs.
 */
export function isJsonText(input: Uint8Array, maxDepth: number): boolean {
  return scan(plain(input), maxDepth)
}

/**
 * {@link isJsonText} over a plain `Uint8Array`, in a function of its own: with the call to `plain`
 * in it, V8 threw this loop's optimised code away for want of feedback on that call.
 */
function scan(bytes: Uint8Array, maxDepth: number): boolean {
  const end = bytes.length
  // The module's tables and constants as locals: V8 reads a module binding through its context,
  // with a check that it is initialised, each time.
  const [table, hex, shortEscape] = [TRANSITIONS, HEX_DIGIT, SHORT_ESCAPE]
  const [run, escaped, literal, close, openArray, openObject] = [RUN, ESCAPE, LITERAL, CLOSE, OPEN_ARRAY_ACTION, OPEN_OBJECT_ACTION]
  const [restOfTrue, restOfFalse, restOfNull] = [REST_OF_TRUE, REST_OF_FALSE, REST_OF_NULL]
  const [openingBracket, closingBracket, closingBrace] = [OPEN_ARRAY, CLOSE_ARRAY, CLOSE_OBJECT]
  const [afterInObject, afterInArray, objectOpened, arrayOpened] = [
    AFTER_IN_OBJECT << 8,
    AFTER_IN_ARRAY << 8,
    OBJECT_OPENED << 8,
    ARRAY_OPENED << 8,
  ]
  // Per open level, the state after a value inside it; a level needs at least one byte.
  const open = new Uint16Array(Math.min(maxDepth, end) + 1)
  open[0] = AFTER_TOP << 8
  let depth = 0
  let state = VALUE_AT_TOP << 8
  for (let i = 0; i < end; i++) {
    let next = table[state + (bytes[i] as number)] as number
    if (next < run) {
      // Plain steps, one after another, in a loop of their own: the commonest case, and what the
      // densest texts (`[0,0,…`, `["","",…`) are made of. Taken in turn with every other case by
      // the outer loop, they cost V8 10–40 % more a byte, on every JSON shape of the cost tests.
      state = next
      while (++i < end) {
        next = table[state + (bytes[i] as number)] as number
        if (next >= run) break
        state = next
      }
      if (i === end) break
    }
    if (next === run) {
      let j = i + 1
      let after = run
      while (j < end) {
        after = table[state + (bytes[j] as number)] as number
        if (after !== run) break
        j++
      }
      // The byte that ends the run is read already: a plain transition is taken here.
      if (after < run) {
        state = after
        i = j
      } else {
        i = j - 1
      }
    } else if (next === openObject || next === openArray) {
      if (depth >= maxDepth) return false
      if (i + 1 < end && bytes[i + 1] === (next === openObject ? closingBrace : closingBracket)) {
        // Empty: a value like a number, with no level to open and close.
        state = open[depth] as number
        i++
      } else if (next === openObject) {
        open[++depth] = afterInObject
        state = objectOpened
      } else {
        open[++depth] = afterInArray
        // Arrays opening one after another, without going round the loop for each.
        while (i + 1 < end && bytes[i + 1] === openingBracket) {
          if (depth >= maxDepth) return false
          open[++depth] = afterInArray
          i++
        }
        state = arrayOpened
      }
    } else if (next === close) {
      state = open[--depth] as number
      // Brackets closing one after another, likewise.
      while (i + 1 < end && table[state + (bytes[i + 1] as number)] === close) {
        state = open[--depth] as number
        i++
      }
    } else if (next === literal) {
      // `true`, `false` or `null` at once, as its first letter says; then what follows any value here.
      const b = bytes[i] as number
      const rest = b === 0x74 ? restOfTrue : b === 0x66 ? restOfFalse : restOfNull
      if (i + rest.length >= end) return false
      for (let k = 0; k < rest.length; k++) if (bytes[i + 1 + k] !== rest[k]) return false
      i += rest.length
      state = open[depth] as number
    } else if (next === escaped) {
      // The backslash and what it stands before (RFC 8259 §7) at once; the string goes on after them.
      const c = i + 1 < end ? (bytes[i + 1] as number) : 0
      if (shortEscape[c] === 1) {
        i++
      } else if (
        c === 0x75 &&
        i + 5 < end &&
        (hex[bytes[i + 2] as number] as number) &
          (hex[bytes[i + 3] as number] as number) &
          (hex[bytes[i + 4] as number] as number) &
          (hex[bytes[i + 5] as number] as number)
      ) {
        i += 5
      } else {
        return false
      }
    } else {
      return false
    }
  }
  return ENDING[state >> 8] === 1
}

/**
 * The same bytes as a plain `Uint8Array`: a Node `Buffer` is a subclass, and loops that see both
 * kinds of array lose V8's fast element access (as in canonical.ts).
 */
function plain(bytes: Uint8Array): Uint8Array {
  return bytes.constructor === Uint8Array ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/**
 * Parses UTF-8 JSON bytes into their `value`, with the `text` they were decoded to (for an adapter
 * that hands the body on as text, which then need not decode it again); `undefined` when they are
 * not valid UTF-8, not JSON, or too deep.
 *
 * `untrusted`: the body was not authenticated (mode `none`), so its refusal must cost little:
 * the bytes are checked to be JSON ({@link isJsonText}) before they are decoded or parsed. An
 * authenticated body is parsed straight away, its cost the delivery's own.
 */
export function parseJson(bytes: Uint8Array, maxDepth: number, untrusted = false): { value: unknown; text: string } | undefined {
  if (untrusted ? !isJsonText(bytes, maxDepth) : nestsDeeperThan(bytes, maxDepth)) return undefined
  try {
    const text = decodeUtf8(bytes)
    return { value: JSON.parse(text), text }
  } catch {
    // The SyntaxError quotes the body, so it is dropped rather than kept as a cause.
    return undefined
  }
}
