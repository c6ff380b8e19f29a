import { h } from './dom.ts'

/**
 * Text that may run to a megabyte (a body, its parsed payload, its hex dump, the text the
 * signature covers, a diff's bytes), in a `pre` whose content is cut into blocks of about
 * {@link BLOCK} characters. Each block is laid out only once it scrolls into view
 * (`content-visibility: auto`, style.css): a 1 MiB body in one text node took Chromium one layout
 * of 600 to 700 ms, a frozen tab, since the `pre` scrolls and its height needs every line of it.
 * The blocks hold the text in order, as text nodes: the element's `textContent` is the text, and
 * the browser's find still searches all of it.
 */

/** Characters per block: a screen or two of the pane, so that a scroll lays out one or two. */
const BLOCK = 8 * 1024
/** A block ends at a line end when one is this near its end: a cut inside a line shows as a wrap. */
const LINE_SEARCH = BLOCK / 4

/** A part of the text; `mark` wraps it in an element (a diff's change, whitespace removed before signing). */
export interface Piece {
  text: string
  mark?: (text: string) => HTMLElement
}

/** `text`, or `pieces` in order, in a `pre` with `attrs`, drawn a block at a time as the reader scrolls. */
export function longText(attrs: Record<string, string | undefined>, text: string | Iterable<Piece>): HTMLElement {
  const pre = h('pre', attrs)
  let block: HTMLElement | undefined
  let room = 0
  const open = (): HTMLElement => {
    if (block === undefined || room <= 0) {
      block = h('span', { class: 'block-of-text' })
      pre.append(block)
      room = BLOCK
    }
    return block
  }
  for (const piece of typeof text === 'string' ? [{ text }] : text) {
    for (let start = 0; start < piece.text.length; ) {
      const target = open()
      const end = cut(piece.text, start, room)
      const part = piece.text.slice(start, end)
      // A marked piece longer than the room left is marked in each block it spans.
      target.append(piece.mark === undefined ? part : piece.mark(part))
      // Cut short: the block is full (or ends at a line end), and the rest starts the next.
      room = end < piece.text.length ? 0 : room - part.length
      start = end
    }
  }
  return pre
}

/**
 * Where a run starting at `start` ends with at most `room` characters: after the last line end
 * near its end, else at `room`, moved back off the middle of a surrogate pair.
 */
function cut(text: string, start: number, room: number): number {
  const end = start + Math.max(room, 1)
  if (end >= text.length) return text.length
  // Searched in the last few characters only: back through a megabyte-long line, once per block, is quadratic.
  const from = Math.max(start, end - LINE_SEARCH)
  const line = text.slice(from, end).lastIndexOf('\n')
  if (line >= 0) return from + line + 1
  const code = text.charCodeAt(end - 1)
  return code >= 0xd800 && code <= 0xdbff && end - 1 > start ? end - 1 : end
}
