import type { Resolvable, WebhookAuth } from './auth.ts'
import { basicChallenge, parseBasicAuthorization } from './basic.ts'
import { utf8 } from './bytes.ts'
import type { CanonicalReport, HmacKey } from './crypto/types.ts'
import type { Sender } from './dedupe-key.ts'
import { WebhookError } from './errors.ts'
import { formField, formPayload, hasMoreFieldsThan, isFormUrlEncoded, MAX_FORM_FIELDS, parseForm, REPEATED_FIELD } from './form.ts'
import { foundSecrets, type Settings } from './options.ts'
import type { WebhookRequest } from './request.ts'
import { SecretDigest } from './secret-digest.ts'
import {
  importKeys,
  joinsCharacters,
  matchCompatibilityForms,
  matchingKey,
  parseSignatureHeader,
  SERVICE_FORM,
  type SignatureMatch,
  serviceDigests,
  signatureHint,
} from './signature.ts'
import { MAX_TOKEN_LENGTH } from './token.ts'
import type { TokenKeys } from './token-keys.ts'

/** Reads the raw body once, within the size limit; later calls return the same bytes. */
export type ReadBody = () => Promise<Uint8Array>

/** What authentication learned, beyond "genuine". */
export interface Authenticated extends Sender {
  /**
   * A token sent as a form field makes the form the payload, so the authenticator hands the
   * parsed form back instead of leaving the body to the JSON parser; `covered` is the form without
   * its token, which is what the delivery is (a retry renews the token).
   */
  form?: { payload: unknown; covered: Uint8Array }
  /** Mode `secret`: which text the signature covered. */
  signature?: SignatureMatch
  /** The raw body, when authentication read it, so the receiver need not wait for it again. */
  body?: Uint8Array
}

export type Authenticator = (req: WebhookRequest, readBody: ReadBody) => Promise<Authenticated>

/**
 * Builds the check for the configured mode. Throws `WebhookError` when a request fails it.
 * `tokens` are the oauth2 receiver's token keys, shared with its token address.
 */
export function createAuthenticator(settings: Settings, tokens: TokenKeys | undefined): Authenticator {
  const { auth } = settings
  switch (auth.mode) {
    case 'secret':
      return secretAuthenticator(auth.secret, settings, auth.unicodeWhitespace === true)
    case 'basic':
      return basicAuthenticator(auth, settings.realm)
    case 'oauth2':
      // The receiver builds token keys for exactly this mode.
      return oauth2Authenticator(tokens as TokenKeys, settings.clock)
    case 'none':
      return async () => NOTHING_LEARNED
  }
}

const NOTHING_LEARNED: Authenticated = {}

async function resolve<T>(value: Resolvable<T>, req: WebhookRequest): Promise<T> {
  return typeof value === 'function' ? (value as (req: WebhookRequest) => T | Promise<T>)(req) : value
}

function secretAuthenticator(
  secret: Extract<WebhookAuth, { mode: 'secret' }>['secret'],
  { signatureHeader, secrets: fixed, fail }: Settings,
  unicodeWhitespace: boolean,
): Authenticator {
  // Fixed secrets were checked at setup, and their keys are imported once; a resolver's answer
  // is checked, and its keys looked up, each time.
  // Stryker disable next-line ConditionalExpression: speed only — without keys made at setup each request imports them (cached) itself
  const fixedKeys = fixed === undefined ? undefined : importKeys(fixed)
  // Once imported they are used as they are: awaiting a settled promise still costs every
  // delivery a turn of the microtask queue and an allocation (see docs/benchmarks.md, notes). A
  // failed import (no platform fails one for a non-empty key) surfaces in the request that awaits
  // it, not as an unhandled rejection at setup.
  let importedKeys: HmacKey[] | undefined
  fixedKeys?.then(
    // Stryker disable next-line BlockStatement: speed only — without it each delivery awaits the same keys
    (keys) => {
      importedKeys = keys
    },
    () => {},
  )
  return async (req, readBody) => {
    const header = req.header(signatureHeader)
    if (header === null || header.trim() === '') {
      // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
      throw new WebhookError('missing_signature', `The ${signatureHeader} header is missing.`)
    }
    const secrets = fixed ?? foundSecrets(await resolve(secret, req), fail)
    // No secret for this request (an unknown tenant) is answered like a wrong signature, so the
    // answer does not tell which tenants exist.
    const body = await readBody()
    const expected = parseSignatureHeader(header)
    let match: SignatureMatch | undefined
    let key = -1
    // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: speed only — with no key or no digest no form can match; the hashes are skipped
    if (secrets.length > 0 && expected.length > 0) {
      // Stryker disable next-line LogicalOperator: speed only — the keys awaited are the same keys
      const keys = importedKeys ?? (await (fixedKeys ?? importKeys(secrets)))
      // The candidates in the protocol's order, as verifySignature tries them (signature.ts), written
      // out here too: a delivery in the service's own form then awaits one call, not two, and on
      // Node none.
      const told: CanonicalReport = { stripped: false, joins: false }
      const digests = serviceDigests(keys, body, told)
      key = matchingKey(Array.isArray(digests) ? digests : await digests, expected)
      if (key >= 0) match = SERVICE_FORM
      else {
        match = await matchCompatibilityForms(body, expected, keys, unicodeWhitespace)
        if (match !== undefined && match.form !== 'service') key = match.key
      }
      // A text that joined bytes into a character is no match here either: answered as a wrong
      // signature, not as a signed body that is not JSON.
      if (match !== undefined && joinsCharacters(match, told, body)) match = undefined
    }
    if (match === undefined) {
      const hint = secrets.length === 0 ? undefined : signatureHint(header, expected, secrets, body)
      // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
      throw new WebhookError('invalid_signature', `The ${signatureHeader} header does not match the body.`, { hint })
    }
    return { signature: match, body, secret: secrets[key] }
  }
}

type BasicAuth = Extract<WebhookAuth, { mode: 'basic' }>

function basicAuthenticator(auth: BasicAuth, realm: string): Authenticator {
  const headers = { 'www-authenticate': basicChallenge(realm) }
  let check: (username: string, password: string, req: WebhookRequest) => Promise<boolean>
  const byVerify = 'verify' in auth
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
      // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
      throw new WebhookError('missing_credentials', 'Basic credentials are required.', { headers })
    }
    if (credentials === 'malformed' || !(await check(credentials.username.normalize('NFC'), credentials.password.normalize('NFC'), req))) {
      // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
      throw new WebhookError('invalid_credentials', 'The Basic credentials are not valid.', { headers })
    }
    // With `verify`, the user name is who sent the delivery (a tenant, say).
    return byVerify ? { username: credentials.username.normalize('NFC') } : NOTHING_LEARNED
  }
}

const BEARER = /^bearer[ ]+(\S+)\s*$/i
/** An Authorization header that names the Bearer scheme, whatever follows it. */
const BEARER_SCHEME = /^\s*bearer(?![!#$%&'*+.^_`|~0-9a-z-])/i

/** The form field that carries a token, the query parameter's name. */
const ACCESS_TOKEN = 'access_token'

/** What stands for a token too long to be one: it fails the check at its first step. */
const INVALID_TOKEN = '.'

function moreThanOneToken(): WebhookError {
  // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
  return new WebhookError('invalid_request', 'Send one access token, in one place.', {
    headers: { 'www-authenticate': 'Bearer error="invalid_request"' },
  })
}

function oauth2Authenticator(keys: TokenKeys, clock: () => number): Authenticator {
  return async (req, readBody) => {
    const inQuery = req.url.searchParams.getAll(ACCESS_TOKEN)
    const authorization = req.header('authorization')
    const bearer = authorization?.match(BEARER)?.[1]
    // One token, in one place (RFC 6750 §2): with two, which one counts would be for the order of
    // the checks to decide, and a proxy or a log rule reading the other would see another credential.
    // A Bearer credential beside a query token is a second one even where it is not read as one
    // (`Bearer` and a tab, or nothing): another reader may take it for one.
    if (inQuery.length > 1 || (inQuery.length === 1 && authorization !== null && BEARER_SCHEME.test(authorization))) {
      throw moreThanOneToken()
    }
    let token = inQuery[0] ?? bearer ?? null
    let form: Uint8Array | undefined
    if (isFormUrlEncoded(req)) {
      // Only the token is looked for, in one pass over the bytes: nothing of an unauthenticated
      // form is decoded, parsed or built. Read even when the token came another way, for a second
      // one in it; the form is the payload only when the token is its field.
      const body = await readBody()
      // The field cap first, by one bounded native search: a form of more fields is refused
      // whatever its token, and the search for the token below reads it part by part, so a form
      // of a million short parts that are not the token (`access_toke=&…`) cost up to fourteen
      // HMACs of it before a token was found missing (docs/benchmarks.md).
      if (hasMoreFieldsThan(body, MAX_FORM_FIELDS)) {
        // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
        throw new WebhookError('invalid_body', `The form has more than ${MAX_FORM_FIELDS} fields.`)
      }
      // A value longer than any token (each character may come percent-encoded) is not decoded.
      const field = formField(body, ACCESS_TOKEN, 3 * MAX_TOKEN_LENGTH)
      if (field === REPEATED_FIELD || (field !== null && token !== null)) throw moreThanOneToken()
      if (token === null) {
        form = body
        token = field === undefined ? INVALID_TOKEN : field
      }
    }
    if (token === null || token === '') {
      // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
      throw new WebhookError('missing_token', 'An access token is required.', { headers: { 'www-authenticate': 'Bearer' } })
    }
    const verdict = await keys.check(token, clock())
    if (verdict !== 'valid') {
      // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
      const message = verdict === 'expired' ? 'The access token has expired.' : 'The access token is not valid.'
      throw new WebhookError('invalid_token', message, { headers: { 'www-authenticate': 'Bearer error="invalid_token"' } })
    }
    if (form === undefined) return NOTHING_LEARNED
    // Authenticated by a form field: the form is the payload, its fields counted above, built in one pass.
    const fields = parseForm(form)
    const payload = formPayload(fields, ACCESS_TOKEN)
    // The delivery is the form without its token, which a retry renews.
    fields.delete(ACCESS_TOKEN)
    return { form: { payload, covered: utf8(fields.toString()) }, body: form }
  }
}
