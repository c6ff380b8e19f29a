/**
 * A Fetch `Headers`; Node's `rawHeaders` (names and values alternating, as received); or Node's
 * `IncomingHttpHeaders` (lower-case names, a repeated header as an array).
 */
export type HeaderSource = { get(name: string): string | null } | readonly string[] | Record<string, string | string[] | undefined>

/**
 * The body as an adapter has it: the raw bytes (when a body parser kept a copy), a Web stream
 * (a Fetch `Request`'s body), nothing, a Node request's body as `nodeBody()` of
 * `@hookguard/core/node` hands it over, or a function that reads the bytes and fails once more than
 * `limit` arrive. The core calls it with the `Content-Length` it has already checked (one valid
 * length, within `limit`), or `undefined` for a body the headers do not measure, so a reader need
 * not parse the header again. What a function resolves is checked against the limit again.
 */
export type BodySource =
  | Uint8Array
  | ArrayBuffer
  | string
  | ReadableStream<Uint8Array>
  | null
  | undefined
  | LimitedBodyReader
  | ((limit: number, declaredLength: number | undefined) => Promise<Uint8Array>)

/**
 * A body reader of the core's own (`nodeBody()`): it keeps to the limit it is given and refuses
 * only with `WebhookError`s, so the core takes what it resolves as it comes. A function's bytes
 * are checked again, which costs a delivery a promise more (see docs/benchmarks.md, notes).
 */
export abstract class LimitedBodyReader {
  abstract read(limit: number, declaredLength: number | undefined): Promise<Uint8Array>
}

/**
 * What an adapter hands the core: the request as the framework has it, web-shaped. A Fetch
 * `Request` fits as it is. The core reads the body at most once, and only after the headers have
 * passed every check that does not need it.
 */
export interface IncomingRequest {
  method: string
  /** Absolute, or a path with its query string. */
  url: string
  /**
   * Where a relative `url` was sent to (`https://acme.example.com`), as the framework trusts it:
   * behind a proxy only when the app says so (`trust proxy`, `app.proxy`). For per-tenant
   * lookups by host name; never used to decide whether a request is genuine. As a function it is
   * called only when a resolver reads the request's `url`: most deliveries never need it, and
   * the frameworks' getters for it (trust settings, Host, protocol) run on every request otherwise.
   */
  origin?: string | (() => string | undefined)
  headers: HeaderSource
  body: BodySource
}

/** What per-tenant resolvers and a custom Basic `verify` see of the request. */
export interface WebhookRequest {
  readonly method: string
  readonly url: URL
  /** A header's value, or `null`; the name is case-insensitive. Repeated headers are joined with `, `. */
  header(name: string): string | null
}

// The base for a relative URL whose origin is unknown or unusable.
const BASE = 'http://localhost'

export function toWebhookRequest(incoming: IncomingRequest): WebhookRequest {
  return new RequestView(incoming)
}

/**
 * A class rather than an object literal with a getter: V8 builds such a literal on its slow path,
 * which cost a webhook on Hono a few percent of its CPU per request.
 */
class RequestView implements WebhookRequest {
  readonly method: string
  readonly #incoming: IncomingRequest
  #url: URL | undefined

  constructor(incoming: IncomingRequest) {
    this.#incoming = incoming
    // Node and Fetch hand a delivery's method on in capitals: V8 upper-cases a string in its
    // runtime, a call out of the compiled code, even one that is in capitals already.
    const { method } = incoming
    this.method = method === 'POST' ? method : method.toUpperCase()
    // A resolver may hand `header` on without its object.
    this.header = this.header.bind(this)
  }

  get url(): URL {
    this.#url ??= urlOf(this.#incoming)
    return this.#url
  }

  header(name: string): string | null {
    return readHeader(this.#incoming.headers, name)
  }
}

/**
 * Made only when a resolver asks. A Host header that is no host (the client wrote it), or an
 * origin the framework could not tell, falls back to the base.
 */
function urlOf({ url, origin }: IncomingRequest): URL {
  try {
    const base = typeof origin === 'function' ? origin() : origin
    if (base !== undefined) return new URL(url, base)
  } catch {
    // Fall through: the path is still worth having.
  }
  return new URL(url, BASE)
}

/** One header's value from any source; repeated lines joined with `, `, as Fetch does. */
export function readHeader(headers: HeaderSource, name: string): string | null {
  if (isRawHeaders(headers)) return rawHeader(headers, name)
  if (typeof headers.get === 'function') return (headers as { get(name: string): string | null }).get(name)
  const value = (headers as Record<string, string | string[] | undefined>)[name.toLowerCase()]
  if (value === undefined) return null
  return typeof value === 'string' ? value : value.join(', ')
}

function isRawHeaders(headers: HeaderSource): headers is readonly string[] {
  return Array.isArray(headers)
}

/**
 * One header from Node's `rawHeaders` (names and values alternating), read in place. A name spelled
 * as asked, or in lower case (HTTP/2, and most clients), is told by one native comparison; only
 * another spelling is compared a character at a time, which for the signature header's 24 costs
 * more than the rest of the lookup (see docs/benchmarks.md, notes).
 */
function rawHeader(raw: readonly string[], name: string): string | null {
  // Looked up only for a line as long as the name and spelled otherwise: most lookups find none.
  let lower: string | undefined
  let value: string | null = null
  // Stryker disable next-line EqualityOperator: equivalent — i is even and rawHeaders has an even length, so i + 1 = length never happens
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const field = raw[i] as string
    if (field.length !== name.length) continue
    // Stryker disable next-line ConditionalExpression: speed only — sameHeaderName finds the same names equal
    if (field !== name) {
      lower ??= lowerCaseName(name)
      // Stryker disable next-line ConditionalExpression,LogicalOperator: speed only — sameHeaderName finds the same names equal
      if (field !== lower && !sameHeaderName(field, name)) continue
    }
    value = value === null ? (raw[i + 1] as string) : `${value}, ${raw[i + 1]}`
  }
  return value
}

/** Names asked for before, with their ASCII letters in lower case. */
const lowerCaseNames = new Map<string, string>()
/** A receiver asks for a handful of names; a resolver could ask for any number, and the rest are compared without. */
const LOWER_CASE_NAMES_MAX = 64

/** `name` with its ASCII letters (only) in lower case, made once per name; `undefined` past the bound. */
function lowerCaseName(name: string): string | undefined {
  let lower = lowerCaseNames.get(name)
  if (lower === undefined && lowerCaseNames.size < LOWER_CASE_NAMES_MAX) {
    lower = name.replace(/[A-Z]+/g, (letters) => letters.toLowerCase())
    lowerCaseNames.set(name, lower)
  }
  return lower
}

/**
 * Header names compared as HTTP compares them: ASCII letters without regard to case (RFC 9110
 * §5.1), every other character exactly. Compared in place, because `toLowerCase()` copies even a
 * name already in lower case, and a delivery reads four headers (see docs/benchmarks.md, notes).
 */
function sameHeaderName(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    if (asciiLower(a.charCodeAt(i)) !== asciiLower(b.charCodeAt(i))) return false
  }
  return true
}

const asciiLower = (code: number) => (code >= 0x41 && code <= 0x5a ? code + 0x20 : code)
