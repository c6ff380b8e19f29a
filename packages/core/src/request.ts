/** A Fetch `Headers`, or Node's `IncomingHttpHeaders` (lower-case names). */
export type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined>

/**
 * The body as an adapter has it: the raw bytes (when a body parser kept a copy), a Web stream
 * (a Fetch `Request`'s body), nothing, or a function that reads the bytes and fails once more than
 * `limit` arrive (Node's stream, read with the adapter's tools).
 */
export type BodySource =
  | Uint8Array
  | ArrayBuffer
  | string
  | ReadableStream<Uint8Array>
  | null
  | undefined
  | ((limit: number) => Promise<Uint8Array>)

/**
 * What an adapter hands the core: the request as the framework has it, web-shaped. A Fetch
 * `Request` fits as it is. The core reads the body at most once, and only after the headers have
 * passed every check that does not need it.
 */
export interface IncomingRequest {
  method: string
  /** Absolute, or a path with its query string. */
  url: string
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

// Only a base for relative URLs: the host a request was sent to is never trusted for anything.
const BASE = 'http://localhost'

export function toWebhookRequest(incoming: IncomingRequest): WebhookRequest {
  const { headers } = incoming
  let url: URL | undefined
  const header =
    typeof headers.get === 'function'
      ? (name: string) => (headers as { get(name: string): string | null }).get(name)
      : (name: string) => {
          const value = (headers as Record<string, string | string[] | undefined>)[name.toLowerCase()]
          if (value === undefined) return null
          return typeof value === 'string' ? value : value.join(', ')
        }
  return {
    method: incoming.method.toUpperCase(),
    get url() {
      url ??= new URL(incoming.url, BASE)
      return url
    },
    header,
  }
}

export function isFormUrlEncoded(request: WebhookRequest): boolean {
  const type = request.header('content-type')
  return type !== null && /^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)
}
