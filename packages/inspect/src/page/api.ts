import { h } from './dom.ts'

/**
 * The page's way to its server. The access token is printed in the address's fragment
 * (`#token=…`, which no browser sends to a server), kept in this tab's sessionStorage (scoped to
 * scheme, host and port, never sent anywhere), taken out of the address bar, and sent in a
 * header on every API call. No cookie.
 */

const TOKEN_KEY = 'hookguard-inspect-token'
let accessToken: string | null = null

/** The token from the address's fragment, else the one this tab kept; null when there is none. */
export function takeToken(): string | null {
  const match = /^#token=([^&]*)/.exec(location.hash)
  let stored: string | null = null
  try {
    if (match) sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1] ?? ''))
    stored = sessionStorage.getItem(TOKEN_KEY)
  } catch {
    // No storage (a locked-down profile): the token lasts as long as the page.
  }
  accessToken = stored ?? (match ? decodeURIComponent(match[1] ?? '') : null)
  if (match) history.replaceState(null, '', `${location.pathname}${location.search}`)
  return accessToken
}

/** The page cannot reach the API without this run's token: says where to find it. */
export class NoToken extends Error {}

export function showNoToken(): void {
  try {
    // A token of an earlier run on this port: worth nothing now.
    sessionStorage.removeItem(TOKEN_KEY)
  } catch {
    // No storage.
  }
  document
    .getElementById('app')
    ?.replaceChildren(
      h(
        'p',
        { class: 'alert', 'data-testid': 'no-token' },
        'Open the address `hookguard inspect` printed (http://…/#token=…): it carries this run’s access token, which this tab does not have.',
      ),
    )
}

export async function authorized(path: string, init?: RequestInit): Promise<Response> {
  if (accessToken === null) throw new NoToken('no access token')
  const response = await fetch(path, {
    ...init,
    headers: { ...(init?.headers as Record<string, string> | undefined), 'x-inspect-token': accessToken },
    credentials: 'omit',
    cache: 'no-store',
  })
  if (response.status === 401) {
    showNoToken()
    throw new NoToken('the access token was refused')
  }
  return response
}

/** A JSON (or text) answer; a status other than 2xx throws. */
export async function api<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await authorized(path, {
    ...init,
    headers: { 'content-type': 'application/json', ...(init?.headers as Record<string, string> | undefined) },
  })
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`)
  const type = response.headers.get('content-type') ?? ''
  return (type.includes('json') ? await response.json() : await response.text()) as T
}

/** A download through fetch (the token in its header), saved from a Blob. */
export async function download(path: string): Promise<void> {
  const response = await authorized(path)
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`)
  const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? 'export'
  const url = URL.createObjectURL(await response.blob())
  const link = h('a', { href: url, download: name, hidden: '' })
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}
