/**
 * Text a sender wrote, made safe to print on a terminal: what could make the terminal show other
 * than what came is replaced with U+FFFD. That is the C0 and C1 controls (escape sequences, a
 * carriage return that writes over its line, a line feed that forges a line of its own), the line
 * and paragraph separators, and every format character and code point a terminal draws as nothing:
 * the bidirectional marks, embeddings, overrides and isolates, which reorder what follows them on
 * screen, and the invisible ones (U+200B, U+FEFF, the soft hyphen, tags, Hangul fillers), with which
 * `order.pa\u200bid` shows as `order.paid`.
 *
 * Kept where they shape what comes before them: the joiners and variation selectors after a
 * character beyond ASCII (👨‍👩‍👧, ❤️, می‌خواهم, an ideograph's variant), and the tags of a
 * subdivision flag after U+1F3F4. After ASCII they shape nothing and only hide, so they go too.
 */

const SEPARATORS = '\\u2028\\u2029'
const SHAPING = '[\\u200c\\u200d\\ufe00-\\ufe0f\\u{e0100}-\\u{e01ef}]'
const TAG = '[\\u{e0020}-\\u{e007f}]'
const INVISIBLE = [
  `(?!${SHAPING}|${TAG})[\\p{Cf}\\p{Default_Ignorable_Code_Point}]`,
  // At the start, or after ASCII.
  `(?<![^\\u0000-\\u007f])${SHAPING}`,
  // Not within a flag's sequence: U+1F3F4, up to seven tags (the longest region code), the cancel
  // tag last. Bounded, so that a run of tags costs each one no more than seven steps back.
  `(?<!\\u{1f3f4}[\\u{e0020}-\\u{e007e}]{0,7})${TAG}`,
].join('|')
const LINE_UNSAFE = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${SEPARATORS}]|${INVISIBLE}`, 'gu')
// A block keeps its tabs and line ends (LF, CR LF); a lone CR would write over its line.
const BLOCK_UNSAFE = new RegExp(`[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f${SEPARATORS}]|${INVISIBLE}|\\r(?!\\n)`, 'gu')

/** For a value printed within one line (a path, an event name): every control replaced. */
export function terminalLine(text: string): string {
  return text.replace(LINE_UNSAFE, '\uFFFD')
}

/** For a body printed as lines of its own: tabs and line ends kept. */
export function terminalBlock(text: string): string {
  return text.replace(BLOCK_UNSAFE, '\uFFFD')
}
