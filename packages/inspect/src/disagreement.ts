import type { Judgement } from './judge.ts'
import type { AppAnswer, InspectedRecord } from './record.ts'

/**
 * The statuses an app answers a genuine delivery with that are its own business, whatever their
 * body: 409 (a duplicate, `dedupe` or the app's own) and 422 (a payload its schema refuses).
 */
const OWN_BUSINESS = new Set([409, 422])
/** The same, said by a hookguard-style refusal's code under another status. */
const OWN_CODES = new Set(['duplicate_in_progress', 'invalid_payload'])

/** The app and hookguard disagree: the app took what hookguard refuses, or refused what it verifies. */
export function disagree(judgement: Judgement, app: AppAnswer): InspectedRecord['disagreement'] {
  if (app.status === undefined) return undefined
  if (judgement.verdict === 'refused' && app.status >= 200 && app.status < 300) return 'app_accepted'
  if (judgement.verdict === 'verified' && judgement.duplicate === undefined && app.status >= 400 && app.status < 500) {
    return OWN_BUSINESS.has(app.status) || (app.code !== undefined && OWN_CODES.has(app.code)) ? undefined : 'app_refused'
  }
  return undefined
}
