/**
 * The detail's parsed pane: the payload as `JSON.stringify(value, null, 2)` writes it, when that
 * text stays within a few times the body. Each of its lines is indented two spaces a level, so
 * arrays nested a thousand deep side by side (2 KB a block) print a megabyte a block: half a
 * gigabyte and seconds of CPU for a body of 256 KiB, which any sender picks, and which the page
 * prints as soon as the record is selected. One scan of the bytes bounds the text's length before
 * anything is parsed; past the bound the page shows the body as text and bytes only.
 */

/** The parsed pane's text may be this many times the body, and {@link PRETTY_SLACK} more. */
const PRETTY_GROWTH = 4
const PRETTY_SLACK = 64 * 1024

/**
 * The most characters a JSON number prints as (`-1.2345678901234567e-100`). Only a number with an
 * exponent can print longer than it is written (`1e20` as 21 digits): such a one is counted at this.
 */
const NUMBER_PRINTED_MAX = 24

const QUOTE = 0x22
const codes = (characters: string) => new Set([...characters].map((c) => c.charCodeAt(0)))
const NUMBER_START = codes('-0123456789')
const IN_NUMBER = codes('+-.eE0123456789')
const EXPONENT = codes('eE')
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPENERS = new Set([0x5b, 0x7b])
const CLOSERS = new Set([0x5d, 0x7d])

/** The body's JSON pretty-printed, or `undefined` when it is not JSON or would print too long. */
export function prettyPayload(body: Uint8Array): string | undefined {
  if (!printsWithin(body, PRETTY_GROWTH * body.byteLength + PRETTY_SLACK)) return undefined
  try {
    // A byte order mark is kept, and JSON.parse refuses it, as the receiver does (`invalid_json`).
    return JSON.stringify(JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body)), null, 2)
  } catch {
    return undefined
  }
}

/**
 * Whether the pretty-printed text is at most `limit` characters, counted from above: a new line
 * and its indent after every opening bracket and comma and before every closing bracket, a space
 * after every colon, and a number with an exponent at the longest a number prints (strings are
 * skipped, and print as written or shorter).
 */
function printsWithin(bytes: Uint8Array, limit: number): boolean {
  let length = bytes.length
  let depth = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number
    if (inString) {
      if (byte === BACKSLASH) i++
      else if (byte === QUOTE) inString = false
      continue
    }
    if (byte === QUOTE) inString = true
    else if (OPENERS.has(byte)) length += 1 + 2 * ++depth
    else if (byte === COMMA) length += 1 + 2 * depth
    else if (CLOSERS.has(byte)) length += 1 + 2 * Math.max(--depth, 0)
    else if (byte === COLON) length++
    else if (NUMBER_START.has(byte)) {
      let exponent = false
      while (i + 1 < bytes.length && IN_NUMBER.has(bytes[i + 1] as number)) {
        i++
        if (EXPONENT.has(bytes[i] as number)) exponent = true
      }
      if (!exponent) continue
      length += NUMBER_PRINTED_MAX
    } else continue
    if (length > limit) return false
  }
  return true
}
