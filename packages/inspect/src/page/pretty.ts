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

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPENERS = new Set([0x5b, 0x7b])
const CLOSERS = new Set([0x5d, 0x7d])

/** The body's JSON pretty-printed, or `undefined` when it is not JSON or would print too long. */
export function prettyPayload(body: Uint8Array): string | undefined {
  if (!printsWithin(body, PRETTY_GROWTH * body.byteLength + PRETTY_SLACK)) return undefined
  try {
    return JSON.stringify(JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body)), null, 2)
  } catch {
    return undefined
  }
}

/**
 * Whether the pretty-printed text is at most `limit` characters, counted from above: a new line
 * and its indent after every opening bracket and comma and before every closing bracket, a space
 * after every colon (strings are skipped; a number may print a few characters longer, `1e20` as
 * 21 digits, which stays within a small multiple of the body).
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
    else continue
    if (length > limit) return false
  }
  return true
}
