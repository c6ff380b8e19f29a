import { type AppAnswer, type InspectedRecord, MAX_RECORDED_ANSWER } from './record.ts'

/**
 * Whether a value read back from a save file is a record this inspector could have made: every
 * field of its type, within the bounds a request could give it. A file is the user's, but it may
 * be cut short, edited, or written by something else; a field out of shape would otherwise stop
 * the next start (a record without `url`) or travel on to the page and the exports (an `id` past
 * what a number holds exactly, a body over the size limit, a header that cannot be sent again).
 */

/** Ids stay exact numbers long after this (2^53), and no run makes this many records. */
export const MAX_RECORD_ID = 2 ** 48
/** Codes, hints, names and labels. */
const MAX_WORD = 256
const MAX_SENTENCE = 4096
/** A request target: Node's default limit on a request's head is 16 KiB. */
const MAX_URL = 64 * 1024
const MAX_HEADERS = 2000
const MAX_HEADER_CHARACTERS = 1024 * 1024

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
/** Bytes as Node reads them (latin1), without the control characters it refuses. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/
const METHOD = /^[A-Z][A-Z_-]{0,31}$/
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const TARGET = /^(?:\/[^\x00-\x20\x7f]*|\*)$/

const SOURCES = ['sender', 'replay', 'resend', 'preset'] as const
const MODES = ['secret', 'basic', 'oauth2', 'none'] as const
const VERDICTS = ['verified', 'refused'] as const
const OUTCOMES = ['matched', 'no_match', 'no_header', 'failed', 'skipped'] as const

export interface ShapeLimits {
  /** The largest body a record may hold: the inspector's size limit. */
  maxBodySize: number
}

type Fields = Record<string, unknown>

const isObject = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value)
const isText = (value: unknown, max: number): value is string => typeof value === 'string' && value.length <= max
const isCount = (value: unknown, min: number, max: number): value is number =>
  Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max
const isDuration = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0
const isOneOf = <T extends string>(value: unknown, values: readonly T[]): value is T => values.includes(value as T)
const isBytes = (value: unknown, max: number): value is Uint8Array => value instanceof Uint8Array && value.byteLength <= max
const isStatus = (value: unknown): value is number => isCount(value, 100, 599)

function isHeaders(value: unknown): value is [string, string][] {
  if (!Array.isArray(value) || value.length > MAX_HEADERS) return false
  let characters = 0
  for (const pair of value) {
    if (!Array.isArray(pair) || pair.length !== 2) return false
    const [name, header] = pair as unknown[]
    if (typeof name !== 'string' || typeof header !== 'string' || !HEADER_NAME.test(name) || !HEADER_VALUE.test(header)) return false
    characters += name.length + header.length
    if (characters > MAX_HEADER_CHARACTERS) return false
  }
  return true
}

/** Optional fields: absent, or of their shape. */
const optional = (value: unknown, check: (value: unknown) => boolean) => value === undefined || check(value)

function isVariantMatch(value: unknown): boolean {
  return (
    isObject(value) &&
    isText(value.variant, MAX_WORD) &&
    isCount(value.secret, 1, MAX_HEADERS) &&
    isText(value.secretLabel, MAX_WORD) &&
    isText(value.explanation, MAX_SENTENCE)
  )
}

function isDiagnosis(value: unknown): boolean {
  if (!isObject(value) || !isOneOf(value.outcome, OUTCOMES) || !optional(value.match, isVariantMatch)) return false
  const { matches, tried, received8 } = value
  return (
    Array.isArray(matches) &&
    matches.length <= 1024 &&
    matches.every(isVariantMatch) &&
    Array.isArray(tried) &&
    tried.length <= 4096 &&
    tried.every(
      (t: unknown) =>
        isObject(t) &&
        isText(t.variant, MAX_WORD) &&
        isCount(t.secret, 1, MAX_HEADERS) &&
        isText(t.digest8, MAX_WORD) &&
        typeof t.matched === 'boolean',
    ) &&
    Array.isArray(received8) &&
    received8.length <= MAX_HEADERS &&
    received8.every((r: unknown) => isText(r, MAX_WORD)) &&
    isText(value.expected8, MAX_WORD) &&
    isText(value.summary, MAX_SENTENCE)
  )
}

function isAppAnswer(value: unknown): value is AppAnswer {
  return (
    isObject(value) &&
    optional(value.status, isStatus) &&
    isHeaders(value.headers) &&
    isBytes(value.body, MAX_RECORDED_ANSWER) &&
    optional(value.error, (e) => isOneOf(e, ['unreachable', 'timeout'] as const)) &&
    optional(value.code, (c) => isText(c, MAX_WORD)) &&
    isDuration(value.durationMs)
  )
}

/** The record, with only the fields a record has, when `value` is of its shape; `undefined` when not. */
export function checkRecord(value: unknown, { maxBodySize }: ShapeLimits): InspectedRecord | undefined {
  if (!isObject(value)) return undefined
  const v = value
  const valid =
    isCount(v.id, 1, MAX_RECORD_ID) &&
    isOneOf(v.kind, ['delivery', 'token'] as const) &&
    isDuration(v.time) &&
    isOneOf(v.source, SOURCES) &&
    typeof v.method === 'string' &&
    METHOD.test(v.method) &&
    isText(v.url, MAX_URL) &&
    TARGET.test(v.url) &&
    isHeaders(v.headers) &&
    isBytes(v.body, maxBodySize) &&
    Number.isSafeInteger(v.bodyBytes) &&
    (v.bodyBytes as number) >= v.body.byteLength &&
    isOneOf(v.mode, MODES) &&
    isOneOf(v.verdict, VERDICTS) &&
    isStatus(v.status) &&
    isDuration(v.durationMs) &&
    [v.code, v.hint, v.form, v.fingerprint].every((field) => optional(field, (f) => isText(f, MAX_WORD))) &&
    optional(v.diagnosis, isDiagnosis) &&
    [v.repeatOf, v.tokenId].every((field) => optional(field, (f) => isCount(f, 1, MAX_RECORD_ID))) &&
    optional(v.duplicate, (d) => isOneOf(d, ['processing', 'done'] as const)) &&
    optional(v.app, isAppAnswer) &&
    optional(v.disagreement, (d) => isOneOf(d, ['app_accepted', 'app_refused'] as const)) &&
    optional(v.tokenHash, (h) => typeof h === 'string' && /^[0-9a-f]{16}$/.test(h)) &&
    optional(
      v.notForwarded,
      (n) => Array.isArray(n) && n.length <= MAX_HEADERS && n.every((name: unknown) => typeof name === 'string' && HEADER_NAME.test(name)),
    ) &&
    optional(v.annotationFailed, (f) => f === true) &&
    optional(v.preset, (p) => isObject(p) && isText(p.name, MAX_WORD) && isText(p.expected, MAX_WORD))
  if (!valid) return undefined
  const record: InspectedRecord = {
    id: v.id as number,
    kind: v.kind as InspectedRecord['kind'],
    time: v.time as number,
    source: v.source as InspectedRecord['source'],
    method: v.method as string,
    url: v.url as string,
    headers: v.headers as [string, string][],
    body: v.body as Uint8Array,
    bodyBytes: v.bodyBytes as number,
    mode: v.mode as InspectedRecord['mode'],
    verdict: v.verdict as InspectedRecord['verdict'],
    status: v.status as number,
    durationMs: v.durationMs as number,
  }
  for (const key of [
    'code',
    'hint',
    'form',
    'fingerprint',
    'diagnosis',
    'repeatOf',
    'duplicate',
    'app',
    'disagreement',
    'tokenHash',
    'tokenId',
    'notForwarded',
    'annotationFailed',
    'preset',
  ] as const) {
    if (v[key] !== undefined) (record as unknown as Fields)[key] = v[key]
  }
  return record
}
