import type { ReadBody } from './authenticate.ts'
import { basicChallenge, parseBasicAuthorization } from './basic.ts'
import { WebhookError } from './errors.ts'
import { hasMoreFieldsThan, isFormUrlEncoded, parseForm } from './form.ts'
import type { Settings } from './options.ts'
import type { WebhookRequest } from './request.ts'
import { jsonResponse, type WebhookResponse } from './response.ts'
import { SecretDigest } from './secret-digest.ts'
import type { TokenKeys } from './token-keys.ts'

/**
 * The realm of the token address's Basic challenge. Its own protection space: the app id and
 * secret are not the credentials of the Basic mode's `webhook` realm, and a client must not be
 * led to offer one for the other.
 */
export const TOKEN_REALM = 'token'

/**
 * The token address's own body limit, whatever `maxBodySize` is: a token request is under 200
 * bytes, and the address reads its body before any credential is checked. Over it: 413
 * `payload_too_large`, refused before reading when `Content-Length` says so. A URL longer than
 * this (the service's GET carries its fields in the query) is 400 `invalid_request`, before the
 * URL is parsed.
 */
export const TOKEN_MAX_BODY_SIZE = 4 * 1024

/**
 * The most parameters a token request may carry, in its query (GET) or its form (POST): it needs
 * four at most. More is 400 `invalid_request`, counted before anything is parsed.
 */
export const TOKEN_MAX_PARAMETERS = 16

/**
 * The ways a client may present its credentials in fields: the service's own, and
 * `client_secret_post` (RFC 6749 §2.3.1). HTTP Basic (`client_secret_basic`) is the third.
 */
const FIELD_METHODS = [
  { id: 'appid', secret: 'secret' },
  { id: 'client_id', secret: 'client_secret' },
] as const

/** Parameters named in a refusal; any other name is the client's own text and is not echoed. */
const KNOWN_PARAMETERS = new Set(['grant_type', 'scope', ...FIELD_METHODS.flatMap((m) => [m.id, m.secret])])

const INVALID_CLIENT_HEADERS = { 'www-authenticate': basicChallenge(TOKEN_REALM) }

export type TokenIssuer = (req: WebhookRequest, readBody: ReadBody) => Promise<WebhookResponse>

interface ClientCredentials {
  id: string
  secret: string
}

/**
 * The token acquisition address. It speaks the service's dialect,
 * `GET {token_url}?appid=…&secret=…&grant_type=client_credentials` (or the same fields in a
 * form-urlencoded POST), and standard OAuth 2.0 client authentication (RFC 6749 §2.3.1):
 * `client_secret_basic` and `client_secret_post`, so that OAuth client libraries work unchanged.
 *
 * Refusals are thrown as `WebhookError`s with the codes of RFC 6749 §5.2; the receiver answers
 * them with {@link tokenErrorResponse}. The answer never holds the secret, the client id that
 * was presented, a token or a query string.
 */
export function createTokenIssuer(keys: TokenKeys, settings: Settings): TokenIssuer {
  const appId = new SecretDigest(keys.appId)
  const secret = new SecretDigest(keys.clientSecret)

  return async function issueToken(req, readBody) {
    const params = await readParams(req, readBody)
    rejectRepeatedParameters(params)
    checkGrantType(params.get('grant_type'))
    const presented = presentedCredentials(req.header('authorization'), params)
    // Both are compared whatever the first says, so a right app id is not answered faster.
    const [idOk, secretOk] = await Promise.all([appId.matches(presented.id), secret.matches(presented.secret)])
    if (!idOk || !secretOk) throw invalidClient('The client id or secret is not valid.')

    const accessToken = await keys.issue(settings.clock())
    // RFC 6749 §5.1: token answers must not be cached.
    return jsonResponse(200, { access_token: accessToken, expires_in: keys.ttl, token_type: 'Bearer' }, { pragma: 'no-cache' })
  }
}

/**
 * The token address's error answer. RFC 6749 §5.2 names the human-readable text
 * `error_description`, which OAuth client libraries show; `message` is kept beside it, the same
 * text, so every hookguard answer can be read the same way.
 */
export function tokenErrorResponse(error: WebhookError): WebhookResponse {
  return jsonResponse(error.status, { error: error.code, error_description: error.message, message: error.message }, error.headers)
}

async function readParams(req: WebhookRequest, readBody: ReadBody): Promise<URLSearchParams> {
  if (req.method === 'GET') {
    const { url } = req
    checkParameterCount(url.search)
    return url.searchParams
  }
  if (req.method === 'POST') {
    if (!isFormUrlEncoded(req)) {
      throw new WebhookError('invalid_request', 'Send the fields as application/x-www-form-urlencoded.')
    }
    const body = await readBody()
    checkParameterCount(body)
    return parseForm(body)
  }
  throw new WebhookError('method_not_allowed', 'Use GET or POST.', { headers: { allow: 'GET, POST' } })
}

/** The URL as the adapter handed it over, checked before it is parsed: see {@link TOKEN_MAX_BODY_SIZE}. */
export function checkTokenRequestUrl(url: string): void {
  if (url.length > TOKEN_MAX_BODY_SIZE) {
    // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
    throw new WebhookError('invalid_request', `A token request's URL is at most ${TOKEN_MAX_BODY_SIZE} characters long.`)
  }
}

function checkParameterCount(fields: Uint8Array | string): void {
  if (hasMoreFieldsThan(fields, TOKEN_MAX_PARAMETERS)) {
    // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
    throw new WebhookError('invalid_request', `A token request has at most ${TOKEN_MAX_PARAMETERS} parameters.`)
  }
}

/**
 * RFC 6749 §3.1 and §3.2: a parameter must not be sent more than once. Which of two `appid`s or
 * `grant_type`s counts would otherwise depend on the parser, and a proxy may read the other.
 */
function rejectRepeatedParameters(params: URLSearchParams): void {
  const seen = new Set<string>()
  for (const name of params.keys()) {
    if (seen.has(name)) {
      // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
      const which = KNOWN_PARAMETERS.has(name) ? `The parameter ${name}` : 'A parameter'
      // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
      throw new WebhookError('invalid_request', `${which} is sent more than once.`)
    }
    seen.add(name)
  }
}

/**
 * The one set of client credentials the request carries. RFC 6749 §2.3: a client must not use
 * more than one authentication method in a request, so an `Authorization: Basic` header beside
 * credential fields, or the service's fields beside `client_id`/`client_secret`, is refused rather
 * than one of them being chosen.
 */
function presentedCredentials(authorization: string | null, params: URLSearchParams): ClientCredentials {
  const basic = parseBasicAuthorization(authorization)
  // RFC 6749 §3.1: a parameter sent without a value is treated as omitted.
  const fieldMethods = FIELD_METHODS.filter((method) => params.get(method.id) || params.get(method.secret))
  if (fieldMethods.length + (basic === 'missing' ? 0 : 1) > 1) {
    throw new WebhookError(
      'invalid_request',
      // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
      'Use one client authentication method: HTTP Basic, client_id and client_secret, or appid and secret.',
    )
  }
  if (basic !== 'missing') {
    const credentials = basic === 'malformed' ? undefined : decodeBasicCredentials(basic.username, basic.password)
    // RFC 6749 §5.2: a client that tried the Authorization header and failed gets 401 and a challenge.
    // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
    if (credentials === undefined) throw invalidClient('The Authorization header is not valid Basic credentials.')
    return credentials
  }
  const [method] = fieldMethods
  if (method === undefined) {
    throw new WebhookError(
      'invalid_request',
      // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
      'Client credentials are required: appid and secret, client_id and client_secret, or HTTP Basic.',
    )
  }
  const id = params.get(method.id)
  const secret = params.get(method.secret)
  if (!id || !secret) throw new WebhookError('invalid_request', `${method.id} and ${method.secret} are both required.`)
  return { id, secret }
}

/**
 * RFC 6749 §2.3.1: for `client_secret_basic` each half is form-urlencoded (Appendix B) before
 * the two are joined and base64-encoded, so each is decoded here. Encoding lets an id or a secret
 * hold a colon. `undefined` for a bad percent-escape or escaped bytes that are not UTF-8.
 */
function decodeBasicCredentials(username: string, password: string): ClientCredentials | undefined {
  const id = formUrlDecode(username)
  const secret = formUrlDecode(password)
  return id === undefined || secret === undefined ? undefined : { id, secret }
}

function formUrlDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '))
  } catch {
    return undefined
  }
}

function checkGrantType(grantType: string | null): void {
  // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
  if (!grantType) throw new WebhookError('invalid_request', 'grant_type is required.')
  if (grantType !== 'client_credentials') {
    // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
    throw new WebhookError('unsupported_grant_type', 'Only grant_type=client_credentials is supported.')
  }
}

/** RFC 7235 §3.1: a 401 always carries a challenge, whichever way the client authenticated. */
function invalidClient(message: string): WebhookError {
  return new WebhookError('invalid_client', message, { headers: INVALID_CLIENT_HEADERS })
}
