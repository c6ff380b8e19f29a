import { describeUrl, EmulatorError, networkCode } from './errors.ts'
import { checkFetch, checkString, checkUrl } from './validate.ts'

export interface RequestTokenOptions {
  /** The token acquisition address configured in the service. */
  tokenUrl: string | URL
  appId: string
  appSecret: string
  /** Default: the global `fetch`. */
  fetch?: typeof fetch
  signal?: AbortSignal
}

/** The token address's JSON answer; `access_token` is guaranteed, the rest is as sent. */
export interface TokenAnswer {
  access_token: string
  expires_in?: number
  token_type?: string
  [field: string]: unknown
}

// An `error` field is quoted in messages only when it looks like an RFC 6749 code, so that a
// server echoing its query (the secret) back cannot smuggle it into a message.
const ERROR_CODE = /^[a-z0-9_]{1,64}$/i

/**
 * Fetches an access token the way the service does before each OAuth 2.0 delivery:
 * `GET {tokenUrl}?appid=…&secret=…&grant_type=client_credentials`, reading `access_token` from
 * the JSON answer. The three parameters are added to any query `tokenUrl` already has.
 *
 * @throws TypeError (before any request) when an option is missing or malformed.
 * @throws EmulatorError with code `token_request_failed` (and `status`, when there was an
 *   answer) when the address cannot be reached, refuses, or answers without an `access_token`.
 *
 * @example
 * const { access_token } = await requestToken({ tokenUrl: 'http://127.0.0.1:3000/token', appId: 'app-1', appSecret })
 */
export async function requestToken(options: RequestTokenOptions): Promise<TokenAnswer> {
  return createTokenRequest(options)()
}

/** Checks the options now and returns the request to make later, so a delivery validates everything up front. */
export function createTokenRequest(options: RequestTokenOptions): () => Promise<TokenAnswer> {
  if (typeof options !== 'object' || options === null) throw new TypeError('@hookguard/emulator: token options are required')
  const url = checkUrl(options.tokenUrl, 'tokenUrl')
  const appId = checkString(options.appId, 'appId')
  const appSecret = checkString(options.appSecret, 'appSecret')
  const fetchImpl = checkFetch(options.fetch)
  const { signal } = options
  url.searchParams.set('appid', appId)
  url.searchParams.set('secret', appSecret)
  url.searchParams.set('grant_type', 'client_credentials')
  const where = describeUrl(url)

  return async function fetchToken() {
    let response: Response
    try {
      response = await fetchImpl(url, { method: 'GET', signal })
    } catch (error) {
      if (signal?.aborted) throw error
      throw new EmulatorError('token_request_failed', `could not reach the token address ${where}${networkCode(error)}`, { cause: error })
    }
    const text = await response.text()
    const answer = parseObject(text)
    if (!response.ok) {
      const error = answer?.error
      const reason = typeof error === 'string' && ERROR_CODE.test(error) && !error.includes(appSecret) ? error : undefined
      throw new EmulatorError(
        'token_request_failed',
        `the token address ${where} answered ${response.status}${reason ? ` (${reason})` : ''}`,
        {
          status: response.status,
          reason,
        },
      )
    }
    if (typeof answer?.access_token !== 'string' || answer.access_token.length === 0) {
      throw new EmulatorError('token_request_failed', `the token address ${where} answered ${response.status} without an access_token`, {
        status: response.status,
      })
    }
    return answer as TokenAnswer
  }
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}
