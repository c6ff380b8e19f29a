import { parseForm, type ReadBody } from './authenticate.ts'
import { SecretDigest } from './credentials.ts'
import { WebhookError } from './errors.ts'
import { DEFAULT_TOKEN_TTL, type Settings, type WebhookAuth } from './options.ts'
import { isFormUrlEncoded, type WebhookRequest } from './request.ts'
import { jsonResponse, type WebhookResponse } from './response.ts'
import { TokenKeys } from './token-keys.ts'

export type TokenIssuer = (req: WebhookRequest, readBody: ReadBody) => Promise<WebhookResponse>

/**
 * The token acquisition address: the service calls
 * `GET {token_url}?appid=…&secret=…&grant_type=client_credentials` before each delivery
 * (a form-urlencoded POST with the same fields is accepted too). Error codes follow RFC 6749 §5.2.
 */
export function createTokenIssuer(auth: Extract<WebhookAuth, { mode: 'oauth2' }>, settings: Settings): TokenIssuer {
  const keys = new TokenKeys(auth.tokenKeys ?? [auth.secret], auth.tokenTtl ?? DEFAULT_TOKEN_TTL)
  const appId = new SecretDigest(auth.appId)
  const secret = new SecretDigest(auth.secret)

  return async (req, readBody) => {
    const params = await readParams(req, readBody)
    const grantType = params.get('grant_type')
    const presentedId = params.get('appid')
    const presentedSecret = params.get('secret')
    if (!grantType || !presentedId || !presentedSecret) {
      throw new WebhookError('invalid_request', 'appid, secret and grant_type are required.')
    }
    if (grantType !== 'client_credentials') {
      throw new WebhookError('unsupported_grant_type', 'Only grant_type=client_credentials is supported.')
    }
    // Both are compared whatever the first says, so a right app id is not answered faster.
    const [idOk, secretOk] = await Promise.all([appId.matches(presentedId), secret.matches(presentedSecret)])
    if (!idOk || !secretOk) throw new WebhookError('invalid_client', 'The app id or secret is not valid.')

    const accessToken = await keys.issue(auth.appId, settings.clock())
    // RFC 6749 §5.1: token answers must not be cached.
    return jsonResponse(200, { access_token: accessToken, expires_in: keys.ttl, token_type: 'Bearer' }, { pragma: 'no-cache' })
  }
}

async function readParams(req: WebhookRequest, readBody: ReadBody): Promise<URLSearchParams> {
  if (req.method === 'GET') return req.url.searchParams
  if (req.method === 'POST') {
    if (!isFormUrlEncoded(req)) {
      throw new WebhookError('invalid_request', 'Send the fields as application/x-www-form-urlencoded.')
    }
    return parseForm(await readBody())
  }
  throw new WebhookError('method_not_allowed', 'Use GET or POST.', { headers: { allow: 'GET, POST' } })
}
