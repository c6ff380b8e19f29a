/** The codes the client itself gives; any other `code` is the `error` (or `code`) field of the service's answer. */
export type ClientErrorCode =
  /** No HTTP answer arrived (refused connection, DNS, TLS, reset); `status` is 0 and `cause` holds fetch's error. */
  | 'network_error'
  /** The token endpoint answered 2xx without a usable `access_token` or `expires_in`. */
  | 'invalid_token_response'
  /** The service answered an error status with a body that names no error code. */
  | 'http_error'
  /** The answer's body was longer than the client reads ({@link MAX_ANSWER_BYTES}); `body` is left out. */
  | 'answer_too_large'

export interface ApiErrorInit {
  code: string
  status: number
  method: string
  path: string
  body?: unknown
  message: string
  cause?: unknown
}

/**
 * A call to the service that did not succeed: a stable `code`, the HTTP `status` (0 when no answer
 * arrived), the request's `method` and `path` (without the query, which may hold personal data
 * such as a mobile number), and the service's `body` as it answered, parsed when it is JSON.
 *
 * Neither the message nor any property ever holds the app secret, the Basic credentials or an
 * access token: should the service echo one back, it is replaced with `[redacted]`.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError'
  readonly code: string
  readonly status: number
  readonly method: string
  readonly path: string
  readonly body: unknown

  constructor({ code, status, method, path, body, message, cause }: ApiErrorInit) {
    super(message, cause === undefined ? undefined : { cause })
    this.code = code
    this.status = status
    this.method = method
    this.path = path
    this.body = body
  }
}

/** What an error needs to know about the request that failed. */
export interface RequestContext {
  method: string
  path: string
  /** Replaces every credential and token in a value, deeply. */
  redact: Redact
}

export type Redact = <T>(value: T) => T

const REDACTED = '[redacted]'

/** A function that replaces each of `secrets` wherever it occurs in a string, array or plain object. */
export function redactor(secrets: readonly string[]): Redact {
  const needles = secrets.filter((secret) => secret !== '')
  const scrub = (text: string): string => needles.reduce((out, needle) => out.replaceAll(needle, REDACTED), text)
  // A copy made level by level from a list, not by recursion: a body the service nests thousands
  // deep (JSON.parse takes millions) must not overflow the stack and escape as a RangeError.
  const copyOf = (value: unknown): unknown =>
    typeof value === 'string' ? scrub(value) : Array.isArray(value) ? [] : isPlainObject(value) ? {} : value
  return (<T>(value: T): T => {
    const root = copyOf(value)
    const pending: [unknown, unknown][] = root !== null && typeof root === 'object' ? [[value, root]] : []
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      const [source, target] = next
      const entries: [string, unknown][] = Array.isArray(source)
        ? source.map((item, index) => [String(index), item])
        : Object.entries(source as object)
      for (const [key, item] of entries) {
        const copy = copyOf(item)
        if (Array.isArray(target)) target.push(copy)
        // Defined, not assigned: a key `__proto__` stays a key, as JSON.parse made it.
        else Object.defineProperty(target, scrub(key), { value: copy, enumerable: true, writable: true, configurable: true })
        if (copy !== null && typeof copy === 'object') pending.push([item, copy])
      }
    }
    return root as T
  }) as Redact
}

/** The error for an answer with a failing status. */
export function answerError(status: number, body: unknown, { method, path, redact }: RequestContext): ApiError {
  const safeBody = redact(body)
  const fields = isPlainObject(safeBody) ? safeBody : {}
  const serviceCode = firstString(fields.error, fields.code)
  const detail = firstString(fields.message, fields.error_description, fields.msg)
  const code = serviceCode ?? 'http_error'
  return new ApiError({
    code,
    status,
    method,
    path,
    body: safeBody,
    message: `${method} ${path} answered ${status} ${code}${detail === undefined ? '' : `: ${detail}`}`,
  })
}

/** The error for an answer longer than the client reads. */
export function answerTooLarge(status: number, limit: number, { method, path }: RequestContext): ApiError {
  return new ApiError({
    code: 'answer_too_large',
    status,
    method,
    path,
    message: `${method} ${path} answered ${status} with a body over ${limit} bytes, which the client does not read`,
  })
}

export function networkError(cause: unknown, { method, path }: RequestContext): ApiError {
  return new ApiError({
    code: 'network_error',
    status: 0,
    method,
    path,
    message: `${method} ${path} got no answer from the service`,
    cause,
  })
}

function firstString(...values: unknown[]): string | undefined {
  return values.find((value): value is string => typeof value === 'string' && value !== '')
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}
