import { createHash, createHmac } from 'node:crypto'
import { DEFAULT_MAX_DEPTH, sign } from '@hookguard/core'
import { escapeLikeGson, nestsDeeperThan, stripJavaWhitespace, stripUnicodeWhitespace } from '@hookguard/core/adapter'

/**
 * Why a signature matched or did not: every variant of the text, the secret and the header that
 * people get wrong, tried locally, and which of them would have matched. The answer stays in the
 * inspector (its page and its `--json` lines); a receiver never tells the sender any of it.
 */

/** The ways a signature can have been made that are worth naming. */
export type VariantName =
  /** The service's own form: Java's whitespace removed. */
  | 'service'
  /** The header holds the right digest once spaces are removed and letters lower-cased (or a `sha256=` prefix dropped). */
  | 'header_normalised'
  /** Gson's HTML escapes applied: the sender signed Gson's output, something re-serialised the body. */
  | 'gson'
  /** Every Unicode whitespace removed (JavaScript's or Python's `\s`), not only Java's six. */
  | 'unicode'
  /** The configured secret with its surrounding whitespace trimmed (a secret file's trailing newline). */
  | 'secret_trimmed'
  /** The configured secret with a trailing newline: the sender read its secret from a file. */
  | 'secret_newline'
  /** The raw bytes with their whitespace: a sender that does not strip. */
  | 'raw_unstripped'
  /** The body parsed and written again by `JSON.stringify`: the sender signed its own serialisation. */
  | 'json_stringify'

export interface VariantMatch {
  variant: VariantName
  /** Which configured secret, from 1. */
  secret: number
  /** The secret as it may be shown: its position and the last four hex digits of its SHA-256, never the secret. */
  secretLabel: string
  explanation: string
}

export interface TriedVariant {
  variant: VariantName
  secret: number
  /** The first 8 hex digits of the digest this variant gives. */
  digest8: string
  matched: boolean
}

export interface Diagnosis {
  /**
   * `matched`: a variant matches (the first is `match`); `no_match`: none does; `no_header`: nothing
   * to compare; `failed`: the diagnosis itself failed on this body (the verdict stands); `skipped`:
   * not tried, the time the inspector gives diagnoses being spent (diagnosis-budget.ts).
   */
  outcome: 'matched' | 'no_match' | 'no_header' | 'failed' | 'skipped'
  match?: VariantMatch
  matches: VariantMatch[]
  tried: TriedVariant[]
  /** The first 8 hex digits of each value the header holds, as sent. */
  received8: string[]
  /** The first 8 hex digits of the service's form signed with the first secret. */
  expected8: string
  /** One sentence for a person. */
  summary: string
}

export interface DiagnoseInput {
  body: Uint8Array
  /** The signature header's value, `null` when absent. */
  header: string | null
  secrets: readonly string[]
  /** Whether the receiver accepts the Unicode form (then it is no diagnosis, but a verdict). */
  unicodeWhitespace?: boolean
}

/** Bodies above this are not diagnosed: each variant costs an HMAC per secret over the body. */
export const MAX_DIAGNOSED_BODY = 1024 * 1024

/**
 * Secrets past this many are not diagnosed: each costs every variant's HMAC over the body, and a
 * rotation has two or three. It also bounds what a record holds (a line of `tried` per variant).
 */
export const MAX_DIAGNOSED_SECRETS = 32

const EXPLANATIONS: Readonly<Record<VariantName, string>> = {
  service: 'the service’s own form: Java’s whitespace removed, then HMAC-SHA256',
  header_normalised:
    'the header holds the right digest once its spaces are removed and its letters lower-cased: the sender formats the header oddly',
  gson: 'the Gson-escaped form: the sender signed Gson’s output, and something re-serialised the body on the way (a relay or a JSON parser)',
  unicode:
    'the form with every Unicode whitespace removed: the sender strips with JavaScript’s or Python’s \\s, not Java’s (accepted only with unicodeWhitespace: true)',
  secret_trimmed: 'the secret with its surrounding whitespace trimmed: the configured secret carries a space or a trailing newline',
  secret_newline: 'the secret with a trailing newline: the sender read its secret from a file and kept the newline',
  raw_unstripped: 'the raw bytes with their whitespace: the sender does not remove whitespace before signing',
  json_stringify: 'the body as JSON.stringify writes it: the sender signed its own serialisation, not the bytes it sent',
}

/** A secret as it may be shown: `#2 (…a9c1)`, from a hash, so nothing of the secret itself. */
export function secretLabel(secret: string, index: number): string {
  return `#${index + 1} (…${createHash('sha256').update(secret, 'utf8').digest('hex').slice(-4)})`
}

/**
 * Tries every variant and says which would have matched. Resolves `no_header` without hashing
 * when there is no header to compare, and `no_match` with an empty `tried` for a body above
 * {@link MAX_DIAGNOSED_BODY}. Between one secret's variants and the next it lets other work run,
 * and stops once `spent` says the time diagnoses may take is used up (see diagnosis-budget.ts).
 */
export async function diagnose(
  { body, header, secrets, unicodeWhitespace = false }: DiagnoseInput,
  spent: () => boolean = () => false,
): Promise<Diagnosis> {
  const values = (header ?? '')
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '')
  const received8 = values.map((value) => value.slice(0, 8))
  const first = secrets[0]
  if (first === undefined) throw new TypeError('@hookguard/inspect: diagnose needs at least one secret')
  const expected = await sign(body, first)
  const expected8 = expected.slice(0, 8)
  if (values.length === 0) {
    return { outcome: 'no_header', matches: [], tried: [], received8, expected8, summary: 'No signature header: nothing to compare.' }
  }
  if (body.byteLength > MAX_DIAGNOSED_BODY) {
    return { outcome: 'no_match', matches: [], tried: [], received8, expected8, summary: 'The body is too large to diagnose.' }
  }
  // What the receiver compares (trimmed, any case) and what a lenient reading of the header gives.
  const strict = new Set(values.map((value) => value.toLowerCase()))
  const lenient = new Set(
    values.map((value) =>
      value
        .replace(/\s+/g, '')
        .replace(/^sha256=/i, '')
        .toLowerCase(),
    ),
  )

  const texts = candidateTexts(body, unicodeWhitespace)
  const tried: TriedVariant[] = []
  const matches: VariantMatch[] = []
  const record = (variant: VariantName, index: number, digest: string, matched: boolean) => {
    tried.push({ variant, secret: index + 1, digest8: digest.slice(0, 8), matched })
    if (matched) {
      matches.push({
        variant,
        secret: index + 1,
        secretLabel: secretLabel(secrets[index] as string, index),
        explanation: EXPLANATIONS[variant],
      })
    }
  }

  const diagnosed = secrets.slice(0, MAX_DIAGNOSED_SECRETS)
  let stopped = false
  for (const [index, secret] of diagnosed.entries()) {
    if (index > 0) {
      // A secret's variants over a large body take milliseconds: deliveries meanwhile are answered
      // between two secrets, not after the last.
      await new Promise((resolve) => setImmediate(resolve))
      if (spent()) {
        stopped = true
        break
      }
    }
    const service = await sign(body, secret)
    if (strict.has(service)) record('service', index, service, true)
    else {
      record('service', index, service, false)
      if (lenient.has(service)) record('header_normalised', index, service, true)
    }
    for (const [variant, text] of texts) {
      const digest = await sign(text, secret)
      record(variant, index, digest, strict.has(digest) || lenient.has(digest))
    }
    const trimmed = secret.trim()
    if (trimmed !== secret && trimmed !== '') {
      const digest = await sign(body, trimmed)
      record('secret_trimmed', index, digest, strict.has(digest) || lenient.has(digest))
    }
    for (const suffix of ['\n', '\r\n']) {
      const digest = await sign(body, secret + suffix)
      record('secret_newline', index, digest, strict.has(digest) || lenient.has(digest))
    }
    // The one variant that keeps whitespace: not what `sign` makes.
    const raw = createHmac('sha256', secret).update(body).digest('hex')
    record('raw_unstripped', index, raw, strict.has(raw) || lenient.has(raw))
  }

  const match = matches[0]
  const reached = tried.at(-1)?.secret ?? 0
  const rest = stopped
    ? ` Secrets after #${reached} were not tried: diagnoses took all the time the inspector gives them.`
    : secrets.length > diagnosed.length
      ? ` Only the first ${diagnosed.length} of the ${secrets.length} secrets are diagnosed.`
      : ''
  if (match === undefined && stopped) {
    return { outcome: 'skipped', matches, tried, received8, expected8, summary: `No variant matches.${rest} The verdict stands.` }
  }
  const summary =
    match === undefined
      ? `No variant matches: the sender most likely signs with a secret that is not configured here, or signed other bytes.${rest}`
      : `Matches ${match.explanation}, with secret ${match.secretLabel}.${rest}`
  return { outcome: match === undefined ? 'no_match' : 'matched', ...(match && { match }), matches, tried, received8, expected8, summary }
}

/** A diagnosis that tried nothing; the verdict stands without it. */
function untried(outcome: 'failed' | 'skipped', summary: string): Diagnosis {
  return { outcome, matches: [], tried: [], received8: [], expected8: '', summary }
}

/** What a record says when its diagnosis threw: that it failed, never why (an error's message may quote the body). */
export function failedDiagnosis(): Diagnosis {
  return untried('failed', 'The diagnosis failed on this body; the verdict stands.')
}

/** What a record says when its diagnosis was not tried, the time the inspector gives diagnoses being spent. */
export function skippedDiagnosis(): Diagnosis {
  return untried('skipped', 'Not diagnosed: refused deliveries arrived faster than the inspector diagnoses them. The verdict stands.')
}

/**
 * For a delivery already verified in the service's own form: which secret signed it, one HMAC per
 * secret at most (none with one secret), rather than every variant.
 */
export async function identifySecret({ body, header, secrets }: DiagnoseInput): Promise<Diagnosis> {
  const values = (header ?? '')
    .split(',')
    .map((value) => value.trim().toLowerCase())
    .filter((value) => value !== '')
  const matched = (index: number, digest8: string): Diagnosis => {
    const match: VariantMatch = {
      variant: 'service',
      secret: index + 1,
      secretLabel: secretLabel(secrets[index] as string, index),
      explanation: EXPLANATIONS.service,
    }
    return {
      outcome: 'matched',
      match,
      matches: [match],
      tried: [{ variant: 'service', secret: index + 1, digest8, matched: true }],
      received8: values.map((value) => value.slice(0, 8)),
      expected8: digest8,
      summary: `Matches ${match.explanation}, with secret ${match.secretLabel}.`,
    }
  }
  if (secrets.length === 1) return matched(0, (values[0] ?? '').slice(0, 8))
  for (const [index, secret] of secrets.entries()) {
    const digest = await sign(body, secret)
    if (values.includes(digest)) return matched(index, digest.slice(0, 8))
  }
  return diagnose({ body, header, secrets })
}

/** The body's alternative texts, each only where it differs from the service's form. */
function candidateTexts(body: Uint8Array, unicodeWhitespace: boolean): [VariantName, Uint8Array][] {
  const out: [VariantName, Uint8Array][] = []
  const gson = escapeLikeGson(body)
  if (gson !== undefined) out.push(['gson', gson])
  // With unicodeWhitespace the receiver accepts this form: it is a verdict, not a diagnosis.
  const unicode = unicodeWhitespace ? undefined : stripUnicodeWhitespace(body)
  if (unicode !== undefined) out.push(['unicode', unicode])
  const stringified = reserialised(body)
  if (stringified !== undefined) out.push(['json_stringify', stringified])
  return out
}

/**
 * Bodies above this are not parsed and written again for `json_stringify`: for a body built of
 * small JSON values that costs hundreds of HMACs over it, the sender's choice (20 ms for 64 KiB of
 * arrays nested a thousand deep, eight times an ordinary delivery's whole diagnosis; half a second
 * for a mebibyte), where the service's deliveries are a few KiB.
 */
const MAX_RESERIALISED_BODY = 16 * 1024

function reserialised(body: Uint8Array): Uint8Array | undefined {
  // Nor one nested deeper than a receiver parses, which it refuses as invalid_json whoever signed
  // it: V8 parses 100 000 nested arrays, and its stringify then overflows the stack on them.
  if (body.byteLength > MAX_RESERIALISED_BODY || nestsDeeperThan(body, DEFAULT_MAX_DEPTH)) return undefined
  let text: Uint8Array
  try {
    text = new TextEncoder().encode(JSON.stringify(JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body))))
  } catch {
    return undefined
  }
  return Buffer.from(text.buffer, text.byteOffset, text.byteLength).equals(stripJavaWhitespace(body)) ? undefined : text
}

/** One run of the text the signature covers: kept bytes, or whitespace the service's strip removes. */
export interface CoveredSegment {
  text: string
  removed: boolean
}

/** Java's six whitespace characters, as the strip removes them. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: \x0B is one of Java's six whitespace characters
const JAVA_WS = /[ \t\n\u000B\f\r]+/g

/**
 * The body as text, split into what the signature covers and what Java's strip removes, for the
 * page to mark. The covered runs joined are `stripJavaWhitespace(body)` decoded.
 */
export function coveredSegments(body: Uint8Array): CoveredSegment[] {
  const text = new TextDecoder().decode(body)
  const segments: CoveredSegment[] = []
  let last = 0
  for (const found of text.matchAll(JAVA_WS)) {
    if (found.index > last) segments.push({ text: text.slice(last, found.index), removed: false })
    segments.push({ text: found[0], removed: true })
    last = found.index + found[0].length
  }
  if (last < text.length) segments.push({ text: text.slice(last), removed: false })
  return segments
}
