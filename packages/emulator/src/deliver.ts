import { DEFAULT_SIGNATURE_HEADER, sign } from '@hookguard/core'
import { formatBasicAuthorization } from '@hookguard/core/adapter'
import { describeUrl, EmulatorError, networkCode } from './errors.ts'
import { serialize } from './serialize.ts'
import { createTokenRequest } from './token.ts'
import { checkFetch, checkString, checkUrl, fail } from './validate.ts'

const CONTENT_TYPE = 'application/json; charset=utf-8'
const MODES = ['secret', 'basic', 'oauth2', 'none'] as const
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
/**
 * The most of an answer's body that is read: a receiver answers in bytes, and a server that sends
 * without end must not fill the sender's memory. What is past it is not read.
 */
export const MAX_ANSWER_BYTES = 1024 * 1024

export interface DeliveryBase {
  /** The message receiving address configured in the service. */
  url: string | URL
  /**
   * What to send. A value is serialised the service's way ({@link serialize}); a string or a
   * `Uint8Array` is sent as is, byte for byte, and signed as is.
   */
  payload: unknown
  /** Default: the global `fetch`. */
  fetch?: typeof fetch
  signal?: AbortSignal
}

/** One delivery's settings: the authentication mode chosen in the service, and its credentials. */
export type DeliverOptions =
  | (DeliveryBase & {
      mode: 'secret'
      secret: string
      /** Default `X-Service-Hmac-Signature`. */
      signatureHeader?: string
    })
  | (DeliveryBase & { mode: 'basic'; username: string; password: string })
  | (DeliveryBase & {
      mode: 'oauth2'
      /** The token acquisition address; fetched before every delivery, as the service does. */
      tokenUrl: string | URL
      appId: string
      appSecret: string
    })
  | (DeliveryBase & { mode: 'none' })

/** The receiver's answer, whatever its status. */
export interface DeliveryResult {
  status: number
  /** Lower-case names. */
  headers: Record<string, string>
  /** Its first {@link MAX_ANSWER_BYTES} bytes at most. */
  body: string
  /** The body went on past {@link MAX_ANSWER_BYTES}, which was not read. */
  truncated?: true
}

/**
 * Makes one delivery exactly as the service does: `POST url` with the JSON body and
 * `Content-Type: application/json; charset=utf-8`, authenticated per mode:
 *
 * - `secret`: `X-Service-Hmac-Signature` (or `signatureHeader`) holds the hex HMAC-SHA256 of the
 *   body with Java's whitespace removed.
 * - `basic`: `Authorization: Basic base64(username:password)`.
 * - `oauth2`: first `GET tokenUrl?appid=…&secret=…&grant_type=client_credentials`, then the
 *   `access_token` from its answer is added to the delivery's query string.
 * - `none`: nothing.
 *
 * Any answer resolves, 4xx and 5xx included; a redirect is not followed but resolved, so an
 * address that redirects shows up as such.
 *
 * @throws TypeError (before any request) when an option is missing or malformed, or the payload
 *   cannot be serialised.
 * @throws EmulatorError `token_request_failed` or `delivery_failed` when the token address or
 *   the receiver cannot be reached, or the token address refuses.
 *
 * @example
 * const { status, body } = await deliver({
 *   url: 'http://127.0.0.1:3000/hooks',
 *   mode: 'secret',
 *   secret: 'whsec-demo-7c2e91',
 *   payload: sampleEvent('order.paid'),
 * })
 */
export async function deliver(options: DeliverOptions): Promise<DeliveryResult> {
  if (typeof options !== 'object' || options === null) fail('deliver needs options: { url, mode, payload, … }')
  const url = checkUrl(options.url, 'url')
  const fetchImpl = checkFetch(options.fetch)
  const body = encodePayload(options.payload)
  const { signal } = options
  const headers: Record<string, string> = { 'content-type': CONTENT_TYPE }

  let authenticate: () => Promise<void>
  switch (options.mode) {
    case 'secret': {
      const secret = checkString(options.secret, 'secret')
      const header =
        options.signatureHeader === undefined ? DEFAULT_SIGNATURE_HEADER : checkString(options.signatureHeader, 'signatureHeader')
      // fetch would refuse it only once sending, with an error that reads like a network failure.
      if (!HEADER_NAME.test(header)) fail('signatureHeader must be an HTTP header name (RFC 9110 token)')
      authenticate = async () => {
        headers[header] = await sign(body, secret)
      }
      break
    }
    case 'basic': {
      const username = checkString(options.username, 'username')
      if (username.includes(':')) fail('username cannot contain a colon (RFC 7617)')
      if (typeof options.password !== 'string') fail('password must be a string')
      headers.authorization = formatBasicAuthorization(username, options.password)
      authenticate = async () => {}
      break
    }
    case 'oauth2': {
      const { tokenUrl, appId, appSecret } = options
      const fetchToken = createTokenRequest({ tokenUrl, appId, appSecret, fetch: fetchImpl, signal })
      authenticate = async () => {
        const { access_token } = await fetchToken()
        url.searchParams.set('access_token', access_token)
      }
      break
    }
    case 'none':
      authenticate = async () => {}
      break
    default:
      fail(`mode must be one of ${MODES.map((m) => `'${m}'`).join(', ')}`)
  }

  await authenticate()
  let response: Response
  try {
    // Node's fetch with `redirect: 'manual'` resolves the 3xx itself, not an opaque response.
    response = await fetchImpl(url, { method: 'POST', headers, body, redirect: 'manual', signal })
  } catch (error) {
    if (signal?.aborted) throw error
    throw new EmulatorError('delivery_failed', `could not reach ${describeUrl(url)}${networkCode(error)}`, { cause: error })
  }
  const answerHeaders: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    answerHeaders[name] = value
  })
  const { body: text, truncated } = await readAnswer(response, url, signal)
  return { status: response.status, headers: answerHeaders, body: text, ...(truncated && { truncated }) }
}

async function readAnswer(response: Response, url: URL, signal: AbortSignal | undefined): Promise<{ body: string; truncated: boolean }> {
  const reader = response.body?.getReader()
  const decoder = new TextDecoder()
  let body = ''
  let size = 0
  let truncated = false
  try {
    for (let read = await reader?.read(); read !== undefined && !read.done; read = await reader?.read()) {
      const room = MAX_ANSWER_BYTES - size
      truncated = read.value.byteLength > room
      body += decoder.decode(truncated ? read.value.subarray(0, room) : read.value, { stream: true })
      size += Math.min(read.value.byteLength, room)
      if (truncated) {
        await reader?.cancel().catch(() => {})
        break
      }
    }
  } catch (error) {
    if (signal?.aborted) throw error
    throw new EmulatorError('delivery_failed', `the answer of ${describeUrl(url)} broke off${networkCode(error)}`, { cause: error })
  }
  // Cut at the bound, a character the decoder still holds is left out, not shown as U+FFFD.
  return { body: truncated ? body : body + decoder.decode(), truncated }
}

function encodePayload(payload: unknown): Uint8Array<ArrayBuffer> {
  if (typeof payload === 'string') return new TextEncoder().encode(payload)
  // A copy: the bytes signed are then the bytes sent, even if the caller reuses its buffer.
  if (payload instanceof Uint8Array) return new Uint8Array(payload)
  if (payload === undefined) fail('payload is required: a value to serialise, or the JSON text to send')
  return new TextEncoder().encode(serialize(payload))
}
