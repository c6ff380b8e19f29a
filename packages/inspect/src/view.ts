import { coveredSegments } from './diagnose.ts'
import type { InspectedRecord } from './record.ts'
import { redactBody, redactCredentials, redactHeader, redactUrl } from './redact.ts'
import { pathOnly } from './url-path.ts'

/**
 * What the page and the `--json` lines get of a record: codes, statuses and redacted text.
 * Nothing here is a secret, a password or a token (those are replaced), and the page renders all
 * of it as text.
 */

/** A timeline row. */
export interface RecordSummary {
  id: number
  kind: 'delivery' | 'token'
  time: number
  source: InspectedRecord['source']
  method: string
  path: string
  mode: InspectedRecord['mode']
  verdict: 'verified' | 'refused'
  status: number
  code?: string
  hint?: string
  form?: string
  diagnosis?: string
  appStatus?: number
  appError?: string
  appCode?: string
  /** The app queued the delivery for a worker (`handoff`): its job id. */
  queuedJob?: string
  disagreement?: InspectedRecord['disagreement']
  duplicate?: InspectedRecord['duplicate']
  repeatOf?: number
  tokenId?: number
  /** Token requests: the deliveries that presented the token it issued. */
  usedBy?: number[]
  preset?: InspectedRecord['preset']
  notForwarded?: string[]
  annotationFailed?: true
  bodyBytes: number
  durationMs: number
}

export function summarize(record: InspectedRecord, usedBy?: number[]): RecordSummary {
  const summary: RecordSummary = {
    id: record.id,
    kind: record.kind,
    time: record.time,
    source: record.source,
    method: record.method,
    path: redactUrl(record.url),
    mode: record.mode,
    verdict: record.verdict,
    status: record.status,
    bodyBytes: record.bodyBytes,
    durationMs: Math.round(record.durationMs * 100) / 100,
  }
  if (record.code !== undefined) summary.code = record.code
  if (record.hint !== undefined) summary.hint = record.hint
  if (record.form !== undefined) summary.form = record.form
  const diagnosis = diagnosisName(record)
  if (diagnosis !== undefined) summary.diagnosis = diagnosis
  if (record.app?.status !== undefined) summary.appStatus = record.app.status
  if (record.app?.error !== undefined) summary.appError = record.app.error
  if (record.app?.code !== undefined) summary.appCode = record.app.code
  if (record.app?.jobId !== undefined) summary.queuedJob = record.app.jobId
  if (record.disagreement !== undefined) summary.disagreement = record.disagreement
  if (record.duplicate !== undefined) summary.duplicate = record.duplicate
  if (record.repeatOf !== undefined) summary.repeatOf = record.repeatOf
  if (record.tokenId !== undefined) summary.tokenId = record.tokenId
  if (usedBy !== undefined && usedBy.length > 0) summary.usedBy = usedBy
  if (record.preset !== undefined) summary.preset = record.preset
  if (record.notForwarded !== undefined) summary.notForwarded = record.notForwarded
  if (record.annotationFailed !== undefined) summary.annotationFailed = record.annotationFailed
  return summary
}

/** The `diagnosis` of a row: the variant that matched, or `no_match`; absent where nothing was diagnosed. */
export function diagnosisName(record: InspectedRecord): string | undefined {
  const { diagnosis } = record
  if (diagnosis === undefined || diagnosis.outcome === 'no_header') return undefined
  if (diagnosis.outcome === 'failed' || diagnosis.outcome === 'skipped') return diagnosis.outcome
  if (record.verdict === 'verified' && diagnosis.match?.variant === 'service') return undefined
  return diagnosis.match?.variant ?? 'no_match'
}

/** The `--json` line of a record: the contract's fields, absent when they do not apply. */
export function jsonLine(record: InspectedRecord): Record<string, unknown> {
  const base = { type: record.kind, id: record.id, method: record.method, path: pathOnly(redactUrl(record.url)), mode: record.mode }
  const line: Record<string, unknown> = { ...base, verdict: record.verdict }
  if (record.code !== undefined) line.code = record.code
  if (record.hint !== undefined) line.hint = record.hint
  const diagnosis = diagnosisName(record)
  if (diagnosis !== undefined) line.diagnosis = diagnosis
  if (record.app?.status !== undefined) line.appStatus = record.app.status
  if (record.app?.error !== undefined) line.appError = record.app.error
  if (record.app?.jobId !== undefined) line.queuedJob = record.app.jobId
  if (record.disagreement !== undefined) line.disagreement = record.disagreement
  if (record.duplicate !== undefined) line.duplicate = record.duplicate
  if (record.tokenId !== undefined) line.tokenId = record.tokenId
  if (record.notForwarded !== undefined) line.notForwarded = record.notForwarded
  if (record.annotationFailed !== undefined) line.annotationFailed = record.annotationFailed
  return line
}

/** Everything the detail pane shows. */
export interface RecordDetail extends RecordSummary {
  headers: [string, string][]
  /** The body as received, base64 (the page shows text and hex); empty for token requests, whose body carries the app secret. */
  bodyBase64: string
  /** Token requests: the body as text with credentials replaced. */
  bodyText?: string
  truncated: boolean
  /** Mode `secret`: the text the signature covers, split where Java's strip removes whitespace. */
  covered?: { text: string; removed: boolean }[]
  diagnosisDetail?: InspectedRecord['diagnosis']
  app?: { status?: number; error?: string; code?: string; headers: [string, string][]; bodyText: string; durationMs: number }
}

const MAX_SEGMENTED = 256 * 1024

export function detail(record: InspectedRecord, usedBy?: number[]): RecordDetail {
  const isToken = record.kind === 'token'
  // A form's credential fields (`access_token`, `client_secret`…) are shown `[redacted]`.
  const body = redactBody(record.headers, record.body)
  const out: RecordDetail = {
    ...summarize(record, usedBy),
    headers: record.headers.map(([name, value]) => [name, redactHeader(name, value)]),
    bodyBase64: isToken ? '' : Buffer.from(body).toString('base64'),
    truncated: record.body.byteLength < record.bodyBytes,
  }
  if (isToken) out.bodyText = redactCredentials(new TextDecoder().decode(record.body))
  if (record.mode === 'secret' && !isToken && body.byteLength <= MAX_SEGMENTED) out.covered = coveredSegments(body)
  if (record.diagnosis !== undefined) out.diagnosisDetail = record.diagnosis
  if (record.app !== undefined) {
    const text = new TextDecoder().decode(record.app.body)
    out.app = {
      ...(record.app.status !== undefined && { status: record.app.status }),
      ...(record.app.error !== undefined && { error: record.app.error }),
      ...(record.app.code !== undefined && { code: record.app.code }),
      headers: record.app.headers.map(([name, value]) => [name, redactHeader(name, value)]),
      // Token requests' answers carry a token; so does an app's answer to one recorded as a delivery (`/token/`).
      bodyText: redactCredentials(text),
      durationMs: Math.round(record.app.durationMs * 100) / 100,
    }
  }
  return out
}
