import type { Received } from '@hookguard/conformance/apps'
import type { Expected } from '@hookguard/conformance/cases'
import { sensitive } from '@hookguard/testkit/fetch'
import type { Outgoing, Reply } from '@hookguard/testkit/http'

// The conformance suite's request helper and its `check()`, without vitest or Node modules, so
// that the same table runs wherever fetch runs: Bun, Deno, inside workerd, and in the Node
// process that drives workerd.

/** Anything that answers a fetch-shaped request: Hono's `app.request`, miniflare's `dispatchFetch`. */
export type FetchLike = (path: string, init: RequestInit & { duplex?: 'half' }) => Response | Promise<Response>

/** One named check and, when it failed, why. */
export interface Outcome {
  name: string
  error?: string
}

/** Runs checks one at a time and keeps their outcomes; a thrown error is a failure. */
export class Tally {
  readonly outcomes: Outcome[] = []

  async check(name: string, run: () => unknown): Promise<void> {
    try {
      await run()
      this.outcomes.push({ name })
    } catch (error) {
      this.outcomes.push({ name, error: describe(error) })
    }
  }

  add(outcomes: readonly Outcome[]): void {
    this.outcomes.push(...outcomes)
  }

  /** Prints each failure and the closing line the orchestrator reads; returns the number failed. */
  report(label: string): number {
    const failed = this.outcomes.filter((outcome) => outcome.error !== undefined)
    for (const { name, error } of failed) console.log(`FAIL ${name}\n     ${error?.replaceAll('\n', '\n     ')}`)
    console.log(`${label}: ${this.outcomes.length - failed.length} passed, ${failed.length} failed`)
    return failed.length
  }
}

export interface Seen {
  /** The auth mode the app was configured with. */
  mode: string
  /** How many times the handler after `webhook()` ran. */
  handled: number
  /** Every request the case sent. */
  sent: readonly Outgoing[]
  /** Every secret configured in the table: no failure answer may contain one. */
  secrets: readonly string[]
}

/** The conformance suite's `check()`: throws, naming the first difference, unless `reply` is what `expected` says. */
export function verifyReply(reply: Reply, expected: Expected, seen: Seen): void {
  same(reply.status, expected.status, `status (answer: ${reply.text.slice(0, 300)})`)
  for (const [name, value] of Object.entries(expected.headers ?? {})) same(reply.headers[name], value, `header ${name}`)

  if (expected.payload !== undefined) {
    same(seen.handled, expected.handled ?? 1, 'times the handler ran')
    const received = JSON.parse(reply.text) as Received
    same(received.mode, seen.mode, 'mode')
    same(received.payload, expected.payload, 'payload')
    if (expected.raw !== undefined) {
      same(received.rawText, expected.raw, 'raw body')
      same(received.rawLength, new TextEncoder().encode(expected.raw).byteLength, 'raw body length')
    }
  } else {
    same(seen.handled, expected.handled ?? 0, 'times the handler ran')
  }

  if (expected.error !== undefined) {
    // Only a schema's refusal says more: where the payload failed.
    const paths = expected.error === 'invalid_payload' ? { paths: anyArray } : {}
    same(JSON.parse(reply.text), { error: expected.error, message: anyString, ...paths }, 'error answer')
    assert(/^application\/json/.test(reply.headers['content-type'] ?? ''), `content-type is ${reply.headers['content-type']}`)
    same(reply.headers['cache-control'], 'no-store', 'header cache-control')
    for (const secret of sensitive(seen.sent, seen.secrets))
      assert(!reply.text.includes(secret), 'the error answer leaks a credential, token or body')
  }

  if (expected.json !== undefined) {
    const answer: unknown = JSON.parse(reply.text)
    assert(matches(answer, expected.json, true), `answer ${reply.text} does not match ${show(expected.json)}`)
  }

  if (expected.drained) same(reply.streamedAll, true, 'whole streamed body sent before the answer')
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message)
}

/** Deep equality, as vitest's `toEqual` for JSON values, with asymmetric matchers in `expected`. */
export function same(actual: unknown, expected: unknown, what: string): void {
  if (!matches(actual, expected, false)) throw new Error(`${what}: expected ${show(expected)}, got ${show(actual)}`)
}

interface AsymmetricMatcher {
  asymmetricMatch(actual: unknown): boolean
}

const anyString: AsymmetricMatcher & { toJSON(): string } = {
  asymmetricMatch: (actual) => typeof actual === 'string',
  toJSON: () => 'Any<String>',
}

const anyArray: AsymmetricMatcher & { toJSON(): string } = {
  asymmetricMatch: (actual) => Array.isArray(actual),
  toJSON: () => 'Any<Array>',
}

function isMatcher(value: unknown): value is AsymmetricMatcher {
  return typeof value === 'object' && value !== null && typeof (value as AsymmetricMatcher).asymmetricMatch === 'function'
}

/** `partial`: objects in `expected` may leave fields out, as in `toMatchObject`. */
function matches(actual: unknown, expected: unknown, partial: boolean): boolean {
  if (isMatcher(expected)) return expected.asymmetricMatch(actual)
  if (Object.is(actual, expected)) return true
  if (typeof actual !== 'object' || typeof expected !== 'object' || actual === null || expected === null) return false
  if (Array.isArray(expected) || Array.isArray(actual)) {
    if (!Array.isArray(expected) || !Array.isArray(actual) || actual.length !== expected.length) return false
    return expected.every((item, index) => matches(actual[index], item, partial))
  }
  const have = actual as Record<string, unknown>
  const want = expected as Record<string, unknown>
  if (!partial && Object.keys(have).length !== Object.keys(want).length) return false
  return Object.keys(want).every((key) => Object.hasOwn(have, key) && matches(have[key], want[key], partial))
}

function show(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value))
  return text.length > 300 ? `${text.slice(0, 300)}…` : text
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.cause === undefined ? error.message : `${error.message} (cause: ${describe(error.cause)})`
  return String(error)
}
