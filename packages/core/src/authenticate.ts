import { basicChallenge, parseBasicAuthorization } from './basic.ts'
import { decodeUtf8 } from './bytes.ts'
import { SecretDigest } from './credentials.ts'
import { WebhookError } from './errors.ts'
import { DEFAULT_REALM, foundSecrets, type Resolvable, type Settings, type WebhookAuth } from './options.ts'
import { isFormUrlEncoded, type WebhookRequest } from './request.ts'
import { type VerifySignatureOptions, verifySignature } from './signature.ts'
import { TokenKeys } from './token-keys.ts'

/** Reads the raw body once, within the size limit; later calls return the same bytes. */
export type ReadBody = () => Promise<Uint8Array>

/**
 * What authentication learned. A token sent as a form field makes the form the payload, so the
 * authenticator hands the parsed form back instead of leaving the body to the JSON parser.
 */
export type Authenticated = { payload: unknown } | undefined

/** Synchronous where nothing needs waiting for (mode `none`), so the receiver awaits only when it must. */
export type Authenticator = (req: WebhookRequest, readBody: ReadBody) => Authenticated | Promise<Authenticated>

/** Builds the check for the configured mode. Throws `WebhookError` when a request fails it. */
export function createAuthenticator(settings: Settings): Authenticator {
  const { auth } = settings
  switch (auth.mode) {
    case 'secret':
      return secretAuthenticator(auth.secret, settings, { unicodeWhitespace: auth.unicodeWhitespace === true })
    case 'basic':
      return basicAuthenticator(auth)
    case 'oauth2':
      return oauth2Authenticator(auth, settings.clock)
    case 'none':
      return () => undefined
  }
}

async function resolve<T>(value: Resolvable<T>, req: WebhookRequest): Promise<T> {
  return typeof value === 'function' ? (value as (req: WebhookRequest) => T | Promise<T>)(req) : value
}

function secretAuthenticator(
  secret: Extract<WebhookAuth, { mode: 'secret' }>['secret'],
  { signatureHeader, secrets: fixed, fail }: Settings,
  candidates: VerifySignatureOptions,
): Authenticator {
  return async (req, readBody) => {
    const header = req.header(signatureHeader)
    if (header === null || header.trim() === '') {
      throw new WebhookError('missing_signature', `The ${signatureHeader} header is missing.`)
    }
    // Fixed secrets were checked at setup; a resolver's answer is checked each time.
    const secrets = fixed ?? foundSecrets(await resolve(secret, req), fail)
    // No secret for this request (an unknown tenant) is answered like a wrong signature, so the
    // answer does not tell which tenants exist.
    if (secrets.length === 0 || !(await verifySignature(await readBody(), header, secrets, candidates))) {
      throw new WebhookError('invalid_signature', `The ${signatureHeader} header does not match the body.`)
    }
    return undefined
  }
}

type BasicAuth = Extract<WebhookAuth, { mode: 'basic' }>

function basicAuthenticator(auth: BasicAuth): Authenticator {
  const headers = { 'www-authenticate': basicChallenge(auth.realm ?? DEFAULT_REALM) }
  let check: (username: string, password: string, req: WebhookRequest) => Promise<boolean>
  if ('verify' in auth) {
    const { verify } = auth
    check = async (username, password, req) => (await verify(username, password, req)) === true
  } else {
    // RFC 7617 §2.1: with charset="UTF-8" both sides are compared in Normalization Form C, so a
    // password typed as "e" plus a combining accent matches the precomposed "é" a client sends.
    const username = new SecretDigest(auth.username.normalize('NFC'))
    const password = new SecretDigest(auth.password.normalize('NFC'))
    // Both halves are always compared, so a right username is not answered faster.
    check = async (user, pass) => {
      const [userOk, passOk] = await Promise.all([username.matches(user), password.matches(pass)])
      return userOk && passOk
    }
  }
  return async (req) => {
    const credentials = parseBasicAuthorization(req.header('authorization'))
    if (credentials === 'missing') {
      throw new WebhookError('missing_credentials', 'Basic credentials are required.', { headers })
    }
    if (credentials === 'malformed' || !(await check(credentials.username.normalize('NFC'), credentials.password.normalize('NFC'), req))) {
      throw new WebhookError('invalid_credentials', 'The Basic credentials are not valid.', { headers })
    }
    return undefined
  }
}

type OAuth2Auth = Extract<WebhookAuth, { mode: 'oauth2' }>

const BEARER = /^bearer[ ]+(\S+)\s*$/i

function oauth2Authenticator(auth: OAuth2Auth, clock: () => number): Authenticator {
  const keys = new TokenKeys(auth)
  return async (req, readBody) => {
    let token = req.url.searchParams.get('access_token') ?? req.header('authorization')?.match(BEARER)?.[1] ?? null
    let authenticated: Authenticated
    if (token === null && isFormUrlEncoded(req)) {
      const form = parseForm(await readBody())
      token = form.get('access_token')
      form.delete('access_token')
      authenticated = { payload: formPayload(form) }
    }
    if (token === null || token === '') {
      throw new WebhookError('missing_token', 'An access token is required.', { headers: { 'www-authenticate': 'Bearer' } })
    }
    const verdict = await keys.check(token, clock())
    if (verdict !== 'valid') {
      const message = verdict === 'expired' ? 'The access token has expired.' : 'The access token is not valid.'
      throw new WebhookError('invalid_token', message, { headers: { 'www-authenticate': 'Bearer error="invalid_token"' } })
    }
    return authenticated
  }
}

export function parseForm(body: Uint8Array): URLSearchParams {
  try {
    return new URLSearchParams(decodeUtf8(body))
  } catch {
    throw new WebhookError('invalid_body', 'The form body is not valid UTF-8.')
  }
}

/**
 * A form's fields as an object; a repeated field becomes an array. Each field is defined as an own
 * property, as `JSON.parse` does, so a field named `__proto__` is data, not the object's prototype
 * (an assignment would hand the handler an object whose `hasOwnProperty` is an array's).
 */
function formPayload(form: URLSearchParams): Record<string, string | string[]> {
  const payload: Record<string, string | string[]> = {}
  for (const key of new Set(form.keys())) {
    const values = form.getAll(key)
    Object.defineProperty(payload, key, {
      value: values.length === 1 ? (values[0] as string) : values,
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return payload
}
