import type { SentAnswer } from '../actions.ts'
import type { RecordSummary } from '../view.ts'

// One formatter for every row: `toLocaleTimeString` with options builds a new one per call.
const CLOCK = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit', second: '2-digit', hour12: false })

/** A row's time of day, in the reader's locale. */
export function clockTime(ms: number): string {
  return CLOCK.format(ms)
}

/**
 * `text` cut to about `max` characters, saying how many it leaves out: for a row, whose full text
 * (a 6 KB path and query) is in the detail. A line of several KB that may break anywhere costs a
 * long layout each time a row is added above it, and a burst adds one a frame.
 */
export function clipped(text: string, max: number): string {
  if (text.length <= max) return text
  // Not between the two halves of a surrogate pair.
  const end = text.charCodeAt(max - 1) >= 0xd800 && text.charCodeAt(max - 1) <= 0xdbff ? max - 1 : max
  return `${text.slice(0, end)}… (${text.length - end} more characters)`
}

/** How a record's verdict reads, in its row and its detail. */
export function verdictLabel(r: RecordSummary): string {
  if (r.kind === 'token') return r.verdict === 'verified' ? 'token issued' : 'token refused'
  if (r.duplicate === 'processing') return 'duplicate (in progress)'
  if (r.duplicate === 'done') return 'duplicate (done)'
  return r.verdict
}

export function disagreementText(d: RecordSummary['disagreement']): string {
  return d === 'app_accepted' ? 'your app accepted what hookguard refuses' : 'your app refused what hookguard verifies'
}

export function answersText(answers: SentAnswer[]): string {
  return answers.map((a) => `${a.status}${a.code ? ` ${a.code}` : ''}`).join(', ')
}
