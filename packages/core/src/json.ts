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

/** Per byte: what may start a value (see {@link isJsonText}); 0 for anything else. */
const STRING = 1
const NUMBER = 2
const CONTAINER = 3
const LITERAL = 4
const VALUE_START = new Uint8Array(256)
VALUE_START[QUOTE] = STRING
for (const b of [0x2d, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39]) VALUE_START[b] = NUMBER
VALUE_START[OPEN_OBJECT] = CONTAINER
VALUE_START[OPEN_ARRAY] = CONTAINER
for (const b of [0x74, 0x66, 0x6e]) VALUE_START[b] = LITERAL

/** 1 for JSON's four whitespace bytes (RFC 8259 §2; what `JSON.parse` skips). */
const WHITESPACE = new Uint8Array(256)
for (const b of [0x20, 0x09, 0x0a, 0x0d]) WHITESPACE[b] = 1

/** 1 for the bytes that end a run of plain string content: the quote, the backslash and the control characters. */
const STRING_STOP = new Uint8Array(256)
for (let b = 0; b < 0x20; b++) STRING_STOP[b] = 1
STRING_STOP[QUOTE] = 1
STRING_STOP[BACKSLASH] = 1

/** 1 for the characters a backslash may stand before, but `u`. */
const SHORT_ESCAPE = new Uint8Array(256)
for (const c of '"\\/bfnrt') SHORT_ESCAPE[c.charCodeAt(0)] = 1

const HEX_DIGIT = new Uint8Array(256)
for (const c of '0123456789abcdefABCDEF') HEX_DIGIT[c.charCodeAt(0)] = 1

const DIGIT = new Uint8Array(256)
for (let b = 0x30; b <= 0x39; b++) DIGIT[b] = 1

const COLON = 0x3a
const COMMA = 0x2c
const IN_OBJECT = 1
const IN_ARRAY = 2
const TRUE = [0x74, 0x72, 0x75, 0x65]
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65]
const NULL = [0x6e, 0x75, 0x6c, 0x6c]

/**
 * The byte at `i`, or 0 past the end, read within bounds: a read past the end would make V8 load
 * `undefined` and every table look-up after it generic. 0 is valid nowhere in a JSON text, so the
 * end stops every scan as such a byte does, and `i === end` tells the two apart.
 */
const byteAt = (bytes: Uint8Array, i: number, end: number): number => (i < end ? (bytes[i] as number) : 0)

/** Where the string whose content starts at `i` ends (past its closing quote), or -1 when it is not a valid JSON string. */
function endOfString(bytes: Uint8Array, i: number, end: number): number {
  for (;;) {
    // Plain content, most of any string: one table look-up a byte. Bytes >= 0x80 pass; whether
    // they are UTF-8 is the decoder's question.
    let b = byteAt(bytes, i, end)
    while (STRING_STOP[b] === 0) b = byteAt(bytes, ++i, end)
    if (b === QUOTE) return i + 1
    // A control character, or the end.
    if (b !== BACKSLASH) return -1
    const escaped = byteAt(bytes, i + 1, end)
    if (SHORT_ESCAPE[escaped] === 1) {
      i += 2
    } else if (
      escaped === 0x75 &&
      HEX_DIGIT[byteAt(bytes, i + 2, end)] === 1 &&
      HEX_DIGIT[byteAt(bytes, i + 3, end)] === 1 &&
      HEX_DIGIT[byteAt(bytes, i + 4, end)] === 1 &&
      HEX_DIGIT[byteAt(bytes, i + 5, end)] === 1
    ) {
      i += 6
    } else {
      return -1
    }
  }
}

/** Where the number starting at `i` ends, or -1 when it is not a JSON number (RFC 8259 §6). */
function endOfNumber(bytes: Uint8Array, i: number, end: number): number {
  let b = byteAt(bytes, i, end)
  if (b === 0x2d) b = byteAt(bytes, ++i, end)
  if (b === 0x30) {
    b = byteAt(bytes, ++i, end)
  } else if (DIGIT[b] === 1) {
    do b = byteAt(bytes, ++i, end)
    while (DIGIT[b] === 1)
  } else {
    return -1
  }
  if (b === 0x2e) {
    if (DIGIT[byteAt(bytes, ++i, end)] !== 1) return -1
    do b = byteAt(bytes, ++i, end)
    while (DIGIT[b] === 1)
  }
  if ((b | 0x20) === 0x65) {
    b = byteAt(bytes, ++i, end)
    if (b === 0x2b || b === 0x2d) b = byteAt(bytes, ++i, end)
    if (DIGIT[b] !== 1) return -1
    while (DIGIT[byteAt(bytes, ++i, end)] === 1);
  }
  return i
}

function endOfLiteral(bytes: Uint8Array, i: number, end: number): number {
  const literal = byteAt(bytes, i, end) === 0x74 ? TRUE : byteAt(bytes, i, end) === 0x66 ? FALSE : NULL
  for (let k = 1; k < literal.length; k++) if (byteAt(bytes, i + k, end) !== literal[k]) return -1
  return i + literal.length
}

/**
 * Whether the bytes are one JSON text (RFC 8259, as `JSON.parse` reads it) nesting no deeper than
 * `maxDepth`, told from the bytes without decoding them; UTF-8 validity is left to the decoder.
 *
 * For a body that nothing authenticated (mode `none`), where refusing it must stay cheap: decoding
 * 1 MiB to a string costs V8 several HMACs of the same bytes (about ten for text outside Latin-1),
 * and `JSON.parse` of a text that is valid up to its last byte costs up to a couple of hundred; a
 * body this says no to is refused before either. One iterative pass, a table look-up a byte.
 */
export function isJsonText(input: Uint8Array, maxDepth: number): boolean {
  const bytes = plain(input)
  const end = bytes.length
  // The module's tables and constants as locals: V8 reads a module binding through its context,
  // with a check that it is initialised, each time (a few HMACs' worth over 1 MiB of brackets).
  const whitespace = WHITESPACE
  const starts = VALUE_START
  const [string, number, literal, container, inObject, inArray, comma] = [STRING, NUMBER, LITERAL, CONTAINER, IN_OBJECT, IN_ARRAY, COMMA]
  const [openObject, openArray, closeObject, closeArray] = [OPEN_OBJECT, OPEN_ARRAY, CLOSE_OBJECT, CLOSE_ARRAY]
  // Whether each open level is an object or an array; a level needs at least one byte.
  const open = new Uint8Array(Math.min(maxDepth, end) + 1)
  let depth = 0
  let i = 0
  // No labelled `continue`: Stryker's instrumented copy of this loop with a label was a syntax
  // error ("Illegal continue statement"), so the module could not load in a mutation run.
  for (;;) {
    while (whitespace[byteAt(bytes, i, end)] === 1) i++
    switch (starts[byteAt(bytes, i, end)]) {
      case string:
        i = endOfString(bytes, i + 1, end)
        break
      case number:
        i = endOfNumber(bytes, i, end)
        break
      case literal:
        i = endOfLiteral(bytes, i, end)
        break
      case container: {
        const kind = byteAt(bytes, i, end) === openObject ? inObject : inArray
        if (++depth > maxDepth) return false
        i++
        while (whitespace[byteAt(bytes, i, end)] === 1) i++
        if (byteAt(bytes, i, end) === (kind === inObject ? closeObject : closeArray)) {
          depth--
          i++
          break
        }
        open[depth] = kind
        if (kind !== inObject) {
          // A run of arrays opening, without going round the loop for each: each one followed by
          // another is not empty. The last is left to the loop, which tells `[]` from `[1`.
          while (byteAt(bytes, i, end) === openArray && byteAt(bytes, i + 1, end) === openArray) {
            if (++depth > maxDepth) return false
            open[depth] = inArray
            i++
          }
          continue
        }
        i = keyAt(bytes, i, end)
        if (i < 0) return false
        continue
      }
      default:
        return false
    }
    if (i < 0) return false
    // After a value: a comma and the next one (out of this loop, round the outer one), or the end
    // of the level.
    for (;;) {
      while (whitespace[byteAt(bytes, i, end)] === 1) i++
      if (depth === 0) return i === end
      const b = byteAt(bytes, i, end)
      const kind = open[depth]
      if (b === comma) {
        i++
        if (kind === inObject) {
          while (whitespace[byteAt(bytes, i, end)] === 1) i++
          i = keyAt(bytes, i, end)
          if (i < 0) return false
        }
        break
      }
      if (b !== (kind === inObject ? closeObject : closeArray)) return false
      depth--
      i++
      // A run of arrays closing, likewise.
      while (depth > 0 && open[depth] === inArray && byteAt(bytes, i, end) === closeArray) {
        depth--
        i++
      }
    }
  }
}

/** Past the key that starts at `i` and its colon, or -1. */
function keyAt(bytes: Uint8Array, i: number, end: number): number {
  if (byteAt(bytes, i, end) !== QUOTE) return -1
  i = endOfString(bytes, i + 1, end)
  if (i < 0) return -1
  while (WHITESPACE[byteAt(bytes, i, end)] === 1) i++
  return byteAt(bytes, i, end) === COLON ? i + 1 : -1
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
