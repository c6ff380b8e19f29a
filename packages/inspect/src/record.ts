import type { Diagnosis } from './diagnose.ts'

/** Where a request came from: the sender, or one of the page's actions. */
export type RecordSource = 'sender' | 'replay' | 'resend' | 'preset'

/** The app's answer, in front of an app (`--forward-to`). */
export interface AppAnswer {
  /** Absent when the app did not answer: see `error`. */
  status?: number
  headers: [string, string][]
  /** The first {@link MAX_RECORDED_ANSWER} bytes of the answer. */
  body: Uint8Array
  /** `unreachable` (connection refused, reset) or `timeout` (no answer in time). */
  error?: 'unreachable' | 'timeout'
  /** The app's `error` code, when its answer is a hookguard-style refusal. */
  code?: string
  /** The app handed the delivery off to a queue (`handoff`): the job's id, as it answered. */
  jobId?: string
  durationMs: number
}

/** One request the inspector saw: a delivery or a token request. Everything the page and the exports are made from. */
export interface InspectedRecord {
  id: number
  kind: 'delivery' | 'token'
  /** Epoch milliseconds. */
  time: number
  source: RecordSource
  method: string
  /** Path and query as received; carries credentials (`access_token`), so never shown as it is. */
  url: string
  /** As received, names in their case. */
  headers: [string, string][]
  /** The bytes received, at most the size limit. */
  body: Uint8Array
  /** The body's length in bytes, more than `body` holds when it was over the limit. */
  bodyBytes: number
  mode: 'secret' | 'basic' | 'oauth2' | 'none'
  /** hookguard's verdict. Token requests: `verified` when a token was issued. */
  verdict: 'verified' | 'refused'
  /** hookguard's status. */
  status: number
  code?: string
  hint?: string
  /** Mode `secret`, verified: the form the signature covered. */
  form?: string
  fingerprint?: string
  /** Mode `secret`: which variant matches and which do not. */
  diagnosis?: Diagnosis
  /** A delivery whose fingerprint an earlier verified one had: that one's id. */
  repeatOf?: number
  /** `processing` (409) or `done` (answered without the handler), as the receiver or the app said. */
  duplicate?: 'processing' | 'done'
  app?: AppAnswer
  /** `app_accepted` (2xx where hookguard refuses), `app_refused` (4xx where hookguard verifies). */
  disagreement?: 'app_accepted' | 'app_refused'
  /** Token requests: a short hash of the token issued; deliveries: of the token presented. Never the token. */
  tokenHash?: string
  /** Deliveries: the token request that issued the token they present. */
  tokenId?: number
  /**
   * In front of an app: the headers the app was not sent because the sender's `Connection` header
   * named them (RFC 9110 §7.6.1), while hookguard judged with them. Names as received.
   */
  notForwarded?: string[]
  /** A note of the record (a hint, a link, a disagreement) could not be made from this request; the verdict stands. */
  annotationFailed?: true
  /** Presets: what was broken, and the refusal it should get. */
  preset?: { name: string; expected: string }
  durationMs: number
}

/** The bytes of the app's answer that are kept: enough to read an error, bounded under a flood. */
export const MAX_RECORDED_ANSWER = 64 * 1024

/** What one record weighs in the ring's byte bound. */
export function recordBytes(record: InspectedRecord): number {
  let bytes = record.body.byteLength + record.url.length + 512
  for (const [name, value] of record.headers) bytes += name.length + value.length
  if (record.app !== undefined) bytes += record.app.body.byteLength
  return bytes
}
