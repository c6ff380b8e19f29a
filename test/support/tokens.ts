import { createReceiver, type WebhookAuth } from '@hookguard/core'

/** The token acquisition address with these parameters; `null` leaves one out. */
export function tokenPath(appid: string | null, secret: string | null, grantType: string | null = 'client_credentials'): string {
  const query = new URLSearchParams()
  if (appid !== null) query.set('appid', appid)
  if (secret !== null) query.set('secret', secret)
  if (grantType !== null) query.set('grant_type', grantType)
  return `/token?${query}`
}

/**
 * A token issued by a receiver of its own, not the app under test: another instance, another
 * app's settings, other token keys. `now` is the caller's clock, so that it ages with the app's.
 */
export async function issueToken(auth: Extract<WebhookAuth, { mode: 'oauth2' }>, now: () => number): Promise<string> {
  const answer = await createReceiver({ auth, clock: now }, { role: 'token' }).token({
    method: 'GET',
    url: tokenPath(auth.appId, auth.secret),
    headers: {},
    body: new Uint8Array(0),
  })
  return (JSON.parse(answer.body) as { access_token: string }).access_token
}
