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

/** Parses UTF-8 JSON bytes; `undefined` when they are not valid UTF-8, not JSON, or too deep. */
export function parseJson(bytes: Uint8Array, maxDepth: number): { value: unknown } | undefined {
  if (nestsDeeperThan(bytes, maxDepth)) return undefined
  try {
    return { value: JSON.parse(decodeUtf8(bytes)) }
  } catch {
    // The SyntaxError quotes the body, so it is dropped rather than kept as a cause.
    return undefined
  }
}
