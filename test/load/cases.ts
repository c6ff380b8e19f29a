/**
 * The request mix the load generator cycles through, and the check of every answer against the
 * answer that request should get.
 */
import { sign } from '@hookguard/core'
import type autocannon from 'autocannon'
import { BASIC, CASE_HEADER, MAX_BODY_SIZE, PATHS, SECRET } from './settings.ts'

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

/** Why an answer is wrong for its request, or `undefined` when it is the expected one. */
function fault(name: CaseName, status: number, body: string, headers: Record<string, string | string[]>, sentId?: string) {
  const expected = EXPECTED[name]
  // The server echoes the case it was sent: another case here means the answer belongs to
  // another request, and checking it against this one's expectation would prove nothing.
  const echoed = headerValue(headers, CASE_HEADER)
  if (echoed !== name) return `answer echoes case ${JSON.stringify(echoed)}`
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

  function record(name: CaseName, status: number, body: string, headers: Record<string, string | string[]>, sentId?: string) {
    counts.checked++
    counts.byCase[name]++
    if (EXPECTED[name].status >= 300) counts.expectedNon2xx++
    if (status >= 500) counts.serverErrors++
    const problem = fault(name, status, body, headers, sentId)
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
      onResponse: (status, text, _context, answerHeaders) => record(name, status, text, answerHeaders),
    }
  }

  function drawn(name: 'valid' | 'basic-valid', path: string, headers: (delivery: Signed) => Record<string, string>): autocannon.Request {
    return {
      method: 'POST',
      path,
      setupRequest(params, context) {
        const delivery = pool[next++ % POOL_SIZE] as Signed
        // With one request in flight per connection, the context still holds this id when its answer comes.
        context.sentId = delivery.id
        return {
          ...params,
          headers: { ...params.headers, 'content-type': 'application/json', [CASE_HEADER]: name, ...headers(delivery) },
          body: delivery.body,
        }
      },
      onResponse: (status, text, context, answerHeaders) => record(name, status, text, answerHeaders, String(context.sentId)),
    }
  }

  return [
    drawn('valid', PATHS.secret, ({ signature }) => ({ [SIGNATURE_HEADER]: signature })),
    request('tampered', PATHS.secret, { [SIGNATURE_HEADER]: first.signature }, tamperedBody),
    request('unsigned', PATHS.secret, {}, first.body),
    request('oversize', PATHS.secret, { [SIGNATURE_HEADER]: oversize.signature }, oversize.body),
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
