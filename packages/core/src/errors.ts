import type { SignatureHint } from './signature.ts'

/** Every `error` code a receiver answers with, and its HTTP status. */
export const ERROR_STATUS = {
  missing_signature: 401,
  invalid_signature: 401,
  missing_credentials: 401,
  invalid_credentials: 401,
  missing_token: 401,
  invalid_token: 401,
  payload_too_large: 413,
  unsupported_encoding: 415,
  invalid_body: 400,
  invalid_json: 400,
  raw_body_unavailable: 500,
  invalid_payload: 422,
  duplicate_in_progress: 409,
  store_unavailable: 503,
  queue_unavailable: 503,
  invalid_request: 400,
  unsupported_grant_type: 400,
  invalid_client: 401,
  method_not_allowed: 405,
} as const satisfies Record<string, number>

export type WebhookErrorCode = keyof typeof ERROR_STATUS

export interface WebhookErrorInit {
  /** Headers the answer must carry, such as `WWW-Authenticate`. */
  headers?: Record<string, string>
  /** For `invalid_payload`: where the payload failed its schema (never what it held). */
  paths?: readonly string[] | undefined
  /** For `invalid_signature`: the likeliest reason, for the receiver's owner (events), never the answer. */
  hint?: SignatureHint | undefined
  cause?: unknown
}

/**
 * Sets `Error.stackTraceLimit` (V8's and JavaScriptCore's frame count for the traces their `Error`
 * constructor captures) and answers what it was, or `undefined` where the runtime has none or will
 * not let it be set (a frozen `Error`): there the trace is captured, as before.
 */
function setStackTraceLimit(limit: number): number | undefined {
  const previous = (Error as { stackTraceLimit?: unknown }).stackTraceLimit
  if (typeof previous !== 'number') return undefined
  try {
    ;(Error as { stackTraceLimit: number }).stackTraceLimit = limit
    return previous
  } catch {
    return undefined
  }
}

/**
 * A request hookguard refused: a stable `code`, its HTTP `status`, and a message safe to show the
 * sender (it never holds a secret, credential, token or body).
 *
 * It follows the `http-errors` convention (`status`, `statusCode`, `expose`, `headers`), so
 * Express's and Koa's error handlers answer it correctly when an adapter passes it on.
 */
export class WebhookError extends Error {
  override readonly name = 'WebhookError'
  readonly code: WebhookErrorCode
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** For `invalid_payload`: where the payload failed its schema, such as `customer.mobile` (never what it held). */
  readonly paths?: readonly string[]
  /** For `invalid_signature`: the likeliest reason (header not hex, wrong length…), never sent in the answer. */
  readonly hint?: SignatureHint
  /** Safe to show the client: the message was written for it. */
  readonly expose = true

  constructor(code: WebhookErrorCode, message: string, init: WebhookErrorInit = {}) {
    const status = ERROR_STATUS[code]
    // A refusal (4xx) is the sender's doing, not a fault of the program: no stack trace is captured
    // for it, which cost two to three HMACs of a 1 KiB body (docs/benchmarks.md). An answer of 5xx
    // keeps its trace, and its `cause` keeps its own.
    const limit = status < 500 ? setStackTraceLimit(0) : undefined
    super(message, init.cause === undefined ? undefined : { cause: init.cause })
    if (limit !== undefined) setStackTraceLimit(limit)
    this.code = code
    this.status = status
    // no-store rides on the error itself, so a framework's own error handler (onError 'next' or
    // 'throw') answers with it too.
    this.headers = { 'cache-control': 'no-store', ...init.headers }
    if (init.paths !== undefined) this.paths = init.paths
    if (init.hint !== undefined) this.hint = init.hint
  }

  get statusCode(): number {
    return this.status
  }
}

/**
 * For adapters: the body was consumed by something mounted earlier and no raw copy is left.
 * `howToMount` is the framework's own fix, appended to the message.
 */
export function rawBodyUnavailable(howToMount: string): WebhookError {
  return new WebhookError(
    'raw_body_unavailable',
    `The request body was read before hookguard could see its raw bytes, so it cannot be verified. ${howToMount}`,
  )
}

export function payloadTooLarge(limit: number): WebhookError {
  return new WebhookError('payload_too_large', `The request body is larger than the limit of ${limit} bytes.`)
}

/** A body that stopped arriving, or took too long, while it was read to be judged (see `BODY_IDLE_MS`). */
export function bodyTooSlow(): WebhookError {
  return new WebhookError('invalid_body', 'The request body did not arrive in time: it stopped, or came too slowly.')
}
