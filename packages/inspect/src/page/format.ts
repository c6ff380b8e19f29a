import type { SentAnswer } from '../actions.ts'
import type { RecordSummary } from '../view.ts'

// One formatter for every row: `toLocaleTimeString` with options builds a new one per call.
const CLOCK = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit', second: '2-digit', hour12: false })

/** A row's time of day, in the reader's locale. */
export function clockTime(ms: number): string {
  return CLOCK.format(ms)
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
