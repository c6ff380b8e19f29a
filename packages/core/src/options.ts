import type { WebhookAuth } from './auth.ts'
import type { DedupeOptions } from './dedupe.ts'
import type { EventListener, WebhookEvent } from './events.ts'
import { checkHandoff, type HandoffOptions } from './handoff.ts'
import type { StandardSchemaV1 } from './standard-schema.ts'

export interface WebhookOptions<Payload = unknown> {
  auth: WebhookAuth
  /** Largest body accepted, in bytes; default 1 MiB. */
  maxBodySize?: number
  /** Deepest nesting of objects and arrays accepted in the payload; default 1000. */
  maxDepth?: number
  /** Header carrying the signature in mode `secret`; default `X-Service-Hmac-Signature`. */
  signatureHeader?: string
  /**
   * What the payload must be, as any Standard Schema (Zod, Valibot, ArkType…), checked after
   * authentication and parsing: a payload that fails it is answered 422 `invalid_payload` with the
   * failing paths (never the values), and the delivery's payload is the schema's output.
   */
  schema?: StandardSchemaV1<unknown, Payload>
  /**
   * Told of every verdict: `verified`, `rejected` (with its code), `duplicate`, `token_issued`,
   * `token_refused`. Events carry codes, modes, sizes, durations and fingerprints, never a secret,
   * a token, a query string or a body. A listener that throws never changes the answer. On Node
   * the same events go to the `hookguard:<type>` diagnostics channels.
   */
  onEvent?: (event: WebhookEvent) => void
  /**
   * Process each delivery once: its fingerprint is claimed before the handler runs. A duplicate
   * while the first is handled gets 409 `duplicate_in_progress` with `Retry-After`; one after it
   * succeeded is answered without running the handler; a handler that fails releases the claim.
   * Opt-in; `{}` uses a bounded in-memory store (one process only).
   */
  dedupe?: DedupeOptions
  /**
   * Answer fast, process later: once verified, the delivery goes on a durable queue (`handoff(queue)`
   * of `@hookguard/bullmq`, `queueHandoff(env.QUEUE)` of `@hookguard/cloudflare`) and the service
   * is answered 202 once the queue holds it; the route's handler does not run, a worker does. A
   * queue that cannot take it is 503 `queue_unavailable`; a copy while its job exists is a
   * duplicate (200). With `dedupe`, a copy of a delivery a worker already handled is too.
   */
  handoff?: HandoffOptions
  /** Milliseconds since the epoch, for token issue and expiry; default `Date.now`. For tests. */
  clock?: () => number
}

export const DEFAULT_MAX_BODY_SIZE = 1_048_576
export const DEFAULT_MAX_DEPTH = 1000
export const DEFAULT_TOKEN_TTL = 7200
export const DEFAULT_REALM = 'webhook'
/** The header the service puts its signature in. */
export const DEFAULT_SIGNATURE_HEADER = 'X-Service-Hmac-Signature'

/** Options with every default filled in, checked once when a receiver is created. */
export interface Settings {
  auth: WebhookAuth
  /** Mode `secret` with fixed secrets: the list, checked once. */
  secrets: readonly string[] | undefined
  /** Mode `basic`: the realm of its challenge. */
  realm: string
  maxBodySize: number
  maxDepth: number
  signatureHeader: string
  clock: () => number
  /** Validates an authenticated payload; absent when no schema was given. */
  schema: StandardSchemaV1 | undefined
  onEvent: EventListener | undefined
  dedupe: DedupeOptions | undefined
  handoff: HandoffOptions | undefined
  /** Reports a mistake found later (a resolver's answer) under the package the user called. */
  fail: Fail
}

/** Throws a setup mistake as a `TypeError`, named for the package the user called. */
type Fail = (message: string) => never

function failingAs(packageName: string): Fail {
  return (message) => {
    throw new TypeError(`${packageName}: ${message}`)
  }
}

/** RFC 7617 §2: user-ids and passwords hold no control characters (CTLs, RFC 5234: 0x00–0x1F, 0x7F). */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 || code === 0x7f) return true
  }
  return false
}

const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value.length > 0

function checkPositiveInteger(value: unknown, name: string, fail: Fail): number {
  // Stryker disable next-line StringLiteral: message text only — the setup TypeError and its package name are pinned
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) fail(`${name} must be a positive integer`)
  return value
}

/**
 * The secrets a per-tenant lookup found; none for an unknown tenant, which is an expected outcome.
 * Anything but strings is a bug in the lookup and throws.
 */
export function foundSecrets(value: unknown, fail: Fail): readonly string[] {
  if (value === undefined || value === null) return []
  const list = typeof value === 'string' ? [value] : value
  if (!Array.isArray(list) || !list.every((entry) => typeof entry === 'string')) {
    // Stryker disable next-line StringLiteral: message text only — the setup TypeError and its package name are pinned
    fail('auth.secret returned something other than a string, an array of strings, null or undefined')
  }
  return list.filter(isNonEmptyString)
}

/** The secret list a fixed `secret` option holds; throws when it is unusable. */
function checkSecrets(value: unknown, fail: Fail): readonly string[] {
  const list = typeof value === 'string' ? [value] : value
  if (!Array.isArray(list) || list.length === 0 || !list.every(isNonEmptyString)) {
    // Stryker disable next-line StringLiteral: message text only — the setup TypeError and its package name are pinned
    fail('auth.secret must be a non-empty string or a non-empty array of them')
  }
  return list
}

function checkAuth(auth: unknown, fail: Fail): WebhookAuth {
  // Stryker disable next-line StringLiteral: message text only — the setup TypeError and its package name are pinned
  if (typeof auth !== 'object' || auth === null) fail("options.auth is required, e.g. { mode: 'secret', secret }")
  const a = auth as Record<string, unknown>
  switch (a.mode) {
    case 'secret':
      if (typeof a.secret !== 'function') checkSecrets(a.secret, fail)
      // Stryker disable next-line StringLiteral: message text only — the setup TypeError and its package name are pinned
      if (a.unicodeWhitespace !== undefined && typeof a.unicodeWhitespace !== 'boolean') fail('auth.unicodeWhitespace must be a boolean')
      break
    case 'basic':
      // Stryker disable next-line StringLiteral: message text only — the setup TypeError and its package name are pinned
      if (a.realm !== undefined && typeof a.realm !== 'string') fail('auth.realm must be a string')
      if (typeof a.verify === 'function') {
        // Stryker disable next-line StringLiteral: message text only — the setup TypeError and its package name are pinned
        if (a.username !== undefined || a.password !== undefined) fail('auth takes either username and password or verify, not both')
      } else {
        // An empty password would let `Basic base64("user:")` in: an unset variable must not open the door.
        if (!isNonEmptyString(a.username) || a.username.includes(':') || hasControlCharacter(a.username)) {
          // Stryker disable next-line StringLiteral: message text only — the setup TypeError and its package name are pinned
          fail('auth.username must be a non-empty string without a colon or control characters (RFC 7617), or pass auth.verify')
        }
        if (!isNonEmptyString(a.password) || hasControlCharacter(a.password)) {
          // Stryker disable next-line StringLiteral: message text only — the setup TypeError and its package name are pinned
          fail('auth.password must be a non-empty string without control characters (RFC 7617)')
        }
      }
      break
    case 'oauth2':
      // Stryker disable next-line StringLiteral: message text only — the setup TypeError and its package name are pinned
      if (!isNonEmptyString(a.appId)) fail('auth.appId must be a non-empty string')
      if (!isNonEmptyString(a.secret)) fail('auth.secret must be a non-empty string')
      if (a.tokenTtl !== undefined) checkPositiveInteger(a.tokenTtl, 'auth.tokenTtl', fail)
      if (a.tokenKeys !== undefined && (!Array.isArray(a.tokenKeys) || a.tokenKeys.length === 0 || !a.tokenKeys.every(isNonEmptyString))) {
        // Stryker disable next-line StringLiteral: message text only — the setup TypeError and its package name are pinned
        fail('auth.tokenKeys must be a non-empty array of non-empty strings')
      }
      break
    case 'none':
      break
    default:
      // Stryker disable next-line StringLiteral: message text only — the setup TypeError and its package name are pinned
      fail("auth.mode must be 'secret', 'basic', 'oauth2' or 'none'")
  }
  return auth as WebhookAuth
}

/**
 * Checks the options once, when a receiver is built, and fills in every default. `packageName` is
 * the package the user called, which names every mistake.
 */
export function checkOptions(options: WebhookOptions, packageName = '@hookguard/core'): Settings {
  const fail = failingAs(packageName)
  // Stryker disable next-line StringLiteral: message text only — the setup TypeError and its package name are pinned
  if (typeof options !== 'object' || options === null) fail('options are required')
  const {
    auth,
    maxBodySize = DEFAULT_MAX_BODY_SIZE,
    maxDepth = DEFAULT_MAX_DEPTH,
    signatureHeader = DEFAULT_SIGNATURE_HEADER,
    clock = Date.now,
    schema,
    onEvent,
    dedupe,
    handoff,
  } = options
  // Stryker disable next-line StringLiteral: message text only — the setup TypeError and its package name are pinned
  if (!isNonEmptyString(signatureHeader)) fail('signatureHeader must be a non-empty string')
  // Stryker disable next-line StringLiteral: message text only — the setup TypeError and its package name are pinned
  if (typeof clock !== 'function') fail('clock must be a function returning milliseconds')
  if (onEvent !== undefined && typeof onEvent !== 'function') fail('onEvent must be a function')
  if (dedupe !== undefined) checkDedupe(dedupe, fail)
  if (handoff !== undefined) checkHandoff(handoff, fail)
  if (schema !== undefined && typeof schema?.['~standard']?.validate !== 'function') {
    fail('schema must be a Standard Schema (Zod, Valibot, ArkType…): an object with a ~standard.validate function')
  }
  const checked = checkAuth(auth, fail)
  return {
    auth: checked,
    secrets: checked.mode === 'secret' && typeof checked.secret !== 'function' ? checkSecrets(checked.secret, fail) : undefined,
    realm: (checked.mode === 'basic' ? checked.realm : undefined) ?? DEFAULT_REALM,
    maxBodySize: withinQueue(checkPositiveInteger(maxBodySize, 'maxBodySize', fail), options.maxBodySize !== undefined, handoff, fail),
    maxDepth: checkPositiveInteger(maxDepth, 'maxDepth', fail),
    signatureHeader,
    clock,
    schema,
    onEvent,
    dedupe,
    handoff,
    fail,
  }
}

/**
 * An adapter's `onError` option, checked once at setup: `'respond'` (the default: the adapter
 * answers the refusal itself) or `passOn`, the framework's own way of handing a refusal to its
 * error handling (`'next'` in Express, `'throw'` in Koa and Hono).
 */
export function checkOnError<const PassOn extends string>(packageName: string, onError: unknown, passOn: PassOn): 'respond' | PassOn {
  if (onError === undefined || onError === 'respond') return 'respond'
  if (onError === passOn) return passOn
  // Stryker disable next-line StringLiteral: message text only — the setup TypeError and its package name are pinned
  return failingAs(packageName)(`onError must be 'respond' or '${passOn}'`)
}

/**
 * The body limit with a hand-off to a queue that bounds its jobs: the queue's, unless a smaller one
 * was asked for; a larger one asked for is a setup mistake, since such a delivery could never be queued.
 */
function withinQueue(maxBodySize: number, given: boolean, handoff: HandoffOptions | undefined, fail: Fail): number {
  const limit = handoff?.queue.maxBodySize
  if (limit === undefined || maxBodySize <= limit) return maxBodySize
  if (!given) return limit
  // Stryker disable next-line StringLiteral: message text only — the setup TypeError and its package name are pinned
  return fail(`maxBodySize (${maxBodySize} bytes) is more than the hand-off's queue can carry (${limit} bytes): set it to ${limit} or less`)
}

function checkDedupe(dedupe: DedupeOptions, fail: Fail): void {
  if (typeof dedupe !== 'object' || dedupe === null) fail('dedupe must be an object: {} for the in-memory store, or { store, ttl }')
  const { store, ttl, processingTtl, claimTimeout, duplicateStatus, key } = dedupe
  if (store !== undefined && typeof store?.claim !== 'function') fail('dedupe.store must have a claim(key, ttlMs) method')
  if (key !== undefined && typeof key !== 'function') fail('dedupe.key must be a function of the request and the delivery')
  if (ttl !== undefined) checkPositiveInteger(ttl, 'dedupe.ttl', fail)
  if (processingTtl !== undefined) checkPositiveInteger(processingTtl, 'dedupe.processingTtl', fail)
  if (claimTimeout !== undefined) checkPositiveInteger(claimTimeout, 'dedupe.claimTimeout', fail)
  if (duplicateStatus !== undefined && !(Number.isInteger(duplicateStatus) && duplicateStatus >= 200 && duplicateStatus < 300)) {
    fail('dedupe.duplicateStatus must be a 2xx status, so that the service stops retrying')
  }
}
