/**
 * The request mix the load generator cycles through, and the check of every answer against the
 * answer that request should get.
 */
import { sign } from '@hookguard/core'
import type autocannon from 'autocannon'
import { BASIC, CASE_HEADER, DELIVERY_HEADER, MAX_BODY_SIZE, PATHS, SECRET } from './settings.ts'

const SIGNATURE_HEADER = 'x-service-hmac-signature'
const DELIVERY_SIZE = 1024
/** Distinct signed deliveries: enough that a payload handed to the wrong request shows up. */
const POOL_SIZE = 256
const MAX_KINDS = 10

type CaseName = 'valid' | 'tampered' | 'unsigned' | 'oversize' | 'basic-valid' | 'basic-wrong'

interface Expected {
  status: number
  /** The `error` code of a refusal. */
  error?: string
}

const EXPECTED: Record<CaseName, Expected> = {
  valid: { status: 200 },
  tampered: { status: 401, error: 'invalid_signature' },
  unsigned: { status: 401, error: 'missing_signature' },
  oversize: { status: 413, error: 'payload_too_large' },
  'basic-valid': { status: 200 },
  'basic-wrong': { status: 401, error: 'invalid_credentials' },
}
const CASE_NAMES = Object.keys(EXPECTED) as CaseName[]
/** The cases whose handler must have seen the very delivery the request carried. */
const DRAWN = new Set<CaseName>(['valid', 'basic-valid'])

/** What one autocannon run saw, counted by the case of the request each answer belongs to. */
export interface Tally {
  checked: number
  wrong: number
  serverErrors: number
  /** Answers to requests that should be refused: autocannon's own non-2xx count must match it. */
  expectedNon2xx: number
  byCase: Record<CaseName, number>
  /** Wrong answers by what was wrong with them (the first few kinds), for the report. */
  problems: Map<string, number>
}

export function newTally(): Tally {
  const byCase = Object.fromEntries(Object.keys(EXPECTED).map((name) => [name, 0])) as Record<CaseName, number>
  return { checked: 0, wrong: 0, serverErrors: 0, expectedNon2xx: 0, byCase, problems: new Map() }
}

/** A 1 KiB delivery as the service sends it, with whitespace inside values to exercise the canonical form. */
function delivery(id: string, size: number): string {
  const payload = {
    event: 'customer.updated',
    id,
    occurredAt: 1_767_225_600_000,
    customer: { mobile: '+8613800000000', name: 'Load Test', tags: ['soak', 'loopback'], amount: 100 },
    note: '',
  }
  const bare = JSON.stringify(payload).length
  payload.note = 'x'.repeat(Math.max(0, size - bare))
  return JSON.stringify(payload)
}

function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`
}

interface Signed {
  id: string
  body: Buffer
  signature: string
}

async function signedPool(): Promise<Signed[]> {
  return Promise.all(
    Array.from({ length: POOL_SIZE }, async (_, i) => {
      const id = `evt-${String(i).padStart(6, '0')}`
      const text = delivery(id, DELIVERY_SIZE)
      return { id, body: Buffer.from(text), signature: await sign(text, SECRET) }
    }),
  )
}

function headerValue(headers: Record<string, string | string[]>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(', ') : value
  }
  return undefined
}

/** Why an answer is wrong for the request it answered, or `undefined` when it is the expected one. */
function fault(name: CaseName, status: number, body: string, sentId?: string) {
  const expected = EXPECTED[name]
  if (status !== expected.status) return `status ${status}, expected ${expected.status}`
  let parsed: { error?: unknown; id?: unknown }
  try {
    parsed = JSON.parse(body)
  } catch {
    return `body is not JSON: ${body.slice(0, 80)}`
  }
  if (expected.error !== undefined && parsed.error !== expected.error) return `error ${String(parsed.error)}, expected ${expected.error}`
  if (sentId !== undefined && parsed.id !== sentId) return `handler saw delivery ${String(parsed.id)}, sent ${sentId}`
  return undefined
}

/**
 * Builds the mix, one request per case, each tallying its own answers into `counts`. The valid
 * cases draw a different signed delivery each time and check that the handler saw that one.
 */
export async function loadRequests(counts: Tally): Promise<autocannon.Request[]> {
  const pool = await signedPool()
  const first = pool[0] as Signed
  let next = 0

  // Same length, one digit changed: only the signature can tell.
  const tamperedBody = Buffer.from(first.body.toString().replace('"amount":100', '"amount":900'))
  const oversizeText = delivery('evt-oversize', MAX_BODY_SIZE + 1024)
  const oversize = { body: Buffer.from(oversizeText), signature: await sign(oversizeText, SECRET) }

  /**
   * Judges an answer by the request it answered, as the server echoes it (see CASE_HEADER), not
   * by the client's pairing: an answer that names no case of the mix is wrong in itself.
   */
  function record(status: number, body: string, headers: Record<string, string | string[]>) {
    const echoed = headerValue(headers, CASE_HEADER)
    const name = CASE_NAMES.find((known) => known === echoed)
    if (name === undefined) {
      const kind = `answer names no case (${JSON.stringify(echoed)})`
      counts.checked++
      counts.wrong++
      counts.problems.set(kind, (counts.problems.get(kind) ?? 0) + 1)
      return
    }
    const sentId = DRAWN.has(name) ? headerValue(headers, DELIVERY_HEADER) : undefined
    counts.checked++
    counts.byCase[name]++
    if (EXPECTED[name].status >= 300) counts.expectedNon2xx++
    if (status >= 500) counts.serverErrors++
    const problem = fault(name, status, body, sentId)
    if (problem === undefined) return
    counts.wrong++
    const kind = `${name}: ${problem}`
    const seen = counts.problems.get(kind)
    if (seen !== undefined || counts.problems.size < MAX_KINDS) counts.problems.set(kind, (seen ?? 0) + 1)
  }

  function request(name: CaseName, path: string, headers: Record<string, string>, body: Buffer): autocannon.Request {
    return {
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json', [CASE_HEADER]: name, ...headers },
      body,
      onResponse: (status, text, _context, answerHeaders) => record(status, text, answerHeaders),
    }
  }

  function drawn(name: 'valid' | 'basic-valid', path: string, headers: (delivery: Signed) => Record<string, string>): autocannon.Request {
    return {
      method: 'POST',
      path,
      setupRequest(params) {
        const delivery = pool[next++ % POOL_SIZE] as Signed
        return {
          ...params,
          headers: {
            ...params.headers,
            'content-type': 'application/json',
            [CASE_HEADER]: name,
            [DELIVERY_HEADER]: String(delivery.id),
            ...headers(delivery),
          },
          body: delivery.body,
        }
      },
      onResponse: (status, text, _context, answerHeaders) => record(status, text, answerHeaders),
    }
  }

  return [
    drawn('valid', PATHS.secret, ({ signature }) => ({ [SIGNATURE_HEADER]: signature })),
    request('tampered', PATHS.secret, { [SIGNATURE_HEADER]: first.signature }, tamperedBody),
    request('unsigned', PATHS.secret, {}, first.body),
    request('oversize', PATHS.secret, { [SIGNATURE_HEADER]: oversize.signature }, oversize.body),
    // autocannon skips the request after one whose connection the server closed (the oversize
    // refusal above): a cheap refusal stands here to be skipped, so every other case is still sent.
    request('unsigned', PATHS.secret, {}, first.body),
    drawn('basic-valid', PATHS.basic, () => ({ authorization: basicAuthorization(BASIC.username, BASIC.password) })),
    request('basic-wrong', PATHS.basic, { authorization: basicAuthorization(BASIC.username, 'not-the-password') }, first.body),
  ]
}

/** One line per case: how many answers of each were checked. */
export function describeMix(tally: Tally): string {
  return Object.entries(tally.byCase)
    .map(([name, count]) => `${name} ${count}`)
    .join(', ')
}
