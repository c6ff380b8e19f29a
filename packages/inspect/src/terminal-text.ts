/**
 * Text a sender wrote, made safe to print on a terminal: what could make the terminal show other
 * than what came is replaced with U+FFFD. That is the C0 and C1 controls (escape sequences, a
 * carriage return that writes over its line, a line feed that forges a line of its own), the
 * bidirectional marks, embeddings, overrides and isolates, which reorder what follows them on
 * screen, and the line and paragraph separators.
 */

const BIDI_AND_SEPARATORS = '\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069'
const LINE_UNSAFE = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${BIDI_AND_SEPARATORS}]`, 'g')
// A block keeps its tabs and line ends (LF, CR LF); a lone CR would write over its line.
const BLOCK_UNSAFE = new RegExp(`[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f${BIDI_AND_SEPARATORS}]|\\r(?!\\n)`, 'g')

/** For a value printed within one line (a path, an event name): every control replaced. */
export function terminalLine(text: string): string {
  return text.replace(LINE_UNSAFE, '\uFFFD')
}

/** For a body printed as lines of its own: tabs and line ends kept. */
export function terminalBlock(text: string): string {
  return text.replace(BLOCK_UNSAFE, '\uFFFD')
}
