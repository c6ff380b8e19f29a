// Every place a sender can put a credential, each holding a canary value unique to it: one table,
// crossed with every output that could repeat a request (the inspector's views and exports, a
// hand-off's job, a dead letter). A new place is one row here, and every output is checked for it.

import { expect } from 'vitest'
import type { Outgoing } from './exchange.ts'

export interface CredentialPlace {
  name: string
  /** A value found in this request only: no output may hold it. */
  canary: string
  request: { method?: string; path: string; headers?: Record<string, string>; body?: string }
  /**
   * Why a receiver takes this value as part of the delivery, not as a credential: a field of the
   * body other than the `access_token` it authenticates with is what the sender sent, and the route's
   * handler gets it as it came; a view that shows requests hides it, a job carries it.
   */
  content?: string
}

const FORM = 'application/x-www-form-urlencoded'
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`

/** The Basic credentials of the `Authorization: Basic` place: a receiver in mode `basic` configured with them takes that request. */
export const PLACED_BASIC = { username: 'hook-user', password: 'canary-basic-password-1b1' }
/** The app id the token requests below name. */
export const PLACED_APP_ID = 'app-outputs-1'

export const CREDENTIAL_PLACES: readonly CredentialPlace[] = [
  { name: 'query access_token', canary: 'canary-query-token-1q1', request: { path: '/hooks?access_token=canary-query-token-1q1' } },
  { name: 'query password', canary: 'canary-query-password-1q2', request: { path: '/hooks?x=1&password=canary-query-password-1q2' } },
  { name: 'query client_secret', canary: 'canary-query-client-1q3', request: { path: '/hooks?client_secret=canary-query-client-1q3' } },
  {
    name: 'Authorization: Basic',
    canary: PLACED_BASIC.password,
    request: { path: '/hooks', headers: { authorization: basic(PLACED_BASIC.username, PLACED_BASIC.password) } },
  },
  {
    name: 'Proxy-Authorization: Basic',
    canary: 'canary-proxy-password-1b2',
    request: { path: '/hooks', headers: { 'proxy-authorization': basic('proxy-user', 'canary-proxy-password-1b2') } },
  },
  {
    name: 'Authorization: Bearer',
    canary: 'canary-bearer-token-1b3',
    request: { path: '/hooks', headers: { authorization: 'Bearer canary-bearer-token-1b3' } },
  },
  { name: 'Cookie', canary: 'canary-cookie-1c1', request: { path: '/hooks', headers: { cookie: 'session=canary-cookie-1c1; a=b' } } },
  // A credential with no scheme before it, where the first word is all there is.
  {
    name: 'Authorization, no scheme',
    canary: 'canary-bare-auth-1a1',
    request: { path: '/hooks', headers: { authorization: 'canary-bare-auth-1a1' } },
  },
  {
    name: 'Set-Cookie sent by the sender',
    canary: 'canary-sender-set-cookie-1c2',
    request: { path: '/hooks', headers: { 'set-cookie': 's=canary-sender-set-cookie-1c2' } },
  },
  {
    name: 'X-Api-Key',
    canary: 'canary-api-key-header-1k1',
    request: { path: '/hooks', headers: { 'x-api-key': 'canary-api-key-header-1k1' } },
  },
  {
    name: 'X-Auth-Token',
    canary: 'canary-auth-token-header-1k2',
    request: { path: '/hooks', headers: { 'x-auth-token': 'canary-auth-token-header-1k2' } },
  },
  ...['token', 'id_token', 'passwd', 'api_key', 'apikey'].map((name, index) => ({
    name: `query ${name}`,
    canary: `canary-query-${index}-1n${index}`,
    request: { path: `/hooks?event=ping&${name}=canary-query-${index}-1n${index}` },
  })),
  {
    name: 'token request: JSON id_token',
    canary: 'canary-json-id-token-1j1',
    request: {
      path: '/token',
      headers: { 'content-type': 'application/json' },
      body: '{"appid":"x","id_token":"canary-json-id-token-1j1"}',
    },
  },
  ...(['access_token', 'client_secret', 'password', 'secret', 'refresh_token', 'access%5Ftoken'] as const).map((field, index) => ({
    name: `form field ${field}`,
    canary: `canary-form-${index}-1f${index}`,
    request: { path: '/hooks', headers: { 'content-type': FORM }, body: `event=ping&${field}=canary-form-${index}-1f${index}&n=1` },
    ...(!/^access(_|%5F)token$/.test(field) && { content: 'a form field the receiver does not authenticate with: the delivery’s own' }),
  })),
  {
    name: 'token request: query secret=',
    canary: 'canary-token-query-secret-1t1',
    request: { method: 'GET', path: `/token?appid=${PLACED_APP_ID}&secret=canary-token-query-secret-1t1&grant_type=client_credentials` },
  },
  {
    name: 'token request: form client_secret',
    canary: 'canary-token-form-secret-1t2',
    request: {
      path: '/token',
      headers: { 'content-type': FORM },
      body: `grant_type=client_credentials&client_id=${PLACED_APP_ID}&client_secret=canary-token-form-secret-1t2`,
    },
  },
  {
    name: 'token request: client_secret_basic',
    canary: 'canary-token-basic-secret-1t3',
    request: {
      path: '/token',
      headers: { 'content-type': FORM, authorization: basic(PLACED_APP_ID, 'canary-token-basic-secret-1t3') },
      body: 'grant_type=client_credentials',
    },
  },
  {
    name: 'token request: JSON body secret',
    canary: 'canary-token-json-secret-1t4',
    request: {
      path: '/token',
      headers: { 'content-type': 'application/json' },
      body: `{"appid":"${PLACED_APP_ID}","secret":"canary-token-json-secret-1t4","grant_type":"client_credentials"}`,
    },
  },
]

/** Base64 of a Basic credential holds the password only encoded: look for that too. */
export function encodedForms(place: CredentialPlace): string[] {
  const auth = place.request.headers?.authorization ?? place.request.headers?.['proxy-authorization']
  return auth?.startsWith('Basic ') ? [auth.slice('Basic '.length)] : []
}

/** What a receiver in each mode needs besides the place: its own credential, added where the place leaves room. */
export type ModeCredential =
  | { mode: 'none' }
  | { mode: 'basic'; authorization: string }
  | { mode: 'secret'; sign: (body: string) => Promise<string> }
  | { mode: 'oauth2'; token: string }

/**
 * The place's request made a delivery in `credential.mode`: its own credential added first, so that
 * a second one the place adds (an `access_token` field or parameter after the real one) is the one
 * read second. A place without a body sends an event of its own (so that no two are copies of one
 * delivery; a form gets a field of its name), and its name rides in `x-request-id`, which a job keeps. `undefined` for a token
 * request: the token address queues nothing.
 */
export async function placedDelivery(place: CredentialPlace, credential: ModeCredential): Promise<Outgoing | undefined> {
  const { path, headers = {}, body } = place.request
  if (path.startsWith('/token')) return undefined
  const withHeaders: Record<string, string> = { 'content-type': 'application/json', 'x-request-id': place.name, ...headers }
  let text = body ?? JSON.stringify({ event: 'ping', data: { place: place.name, mode: credential.mode } })
  let target = path
  switch (credential.mode) {
    case 'none':
      break
    case 'basic':
      // A place that brings its own Authorization sends that one.
      withHeaders.authorization ??= credential.authorization
      break
    case 'secret':
      withHeaders['x-service-hmac-signature'] = await credential.sign(text)
      break
    case 'oauth2': {
      const token = `access_token=${encodeURIComponent(credential.token)}`
      if (withHeaders['content-type'] === FORM) text = `${token}&${text}&place=${encodeURIComponent(place.name)}`
      else target = path.includes('?') ? path.replace('?', `?${token}&`) : `${path}?${token}`
      break
    }
  }
  return { method: place.request.method ?? 'POST', path: target, headers: withHeaders, body: text }
}

/** Sends every place's delivery in each mode, through that mode's `send`. */
export async function sendEveryPlace(modes: readonly { credential: ModeCredential; send(outgoing: Outgoing): Promise<unknown> }[]) {
  for (const { credential, send } of modes) {
    for (const place of CREDENTIAL_PLACES) {
      const outgoing = await placedDelivery(place, credential)
      if (outgoing !== undefined) await send(outgoing)
    }
  }
}

/**
 * Fails when `text` (a delivery's output, named `where`: a job, a dead letter) holds any place's
 * canary, its encoded form, or any of `also`; a place that is the delivery's `content` is its own.
 */
export function expectNoPlacedCredential(text: string, where: string, also: readonly string[] = []): void {
  for (const place of CREDENTIAL_PLACES) {
    if (place.content !== undefined) continue
    for (const value of [place.canary, ...encodedForms(place)]) expect(text, `${place.name} in ${where}`).not.toContain(value)
  }
  for (const value of also) expect(text, `the mode’s own credential in ${where}`).not.toContain(value)
}
