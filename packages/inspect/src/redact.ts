import { createHash } from 'node:crypto'

/**
 * What may leave the inspector's process (for its page, its `--json` lines, its log lines):
 * credentials are replaced by a marker wherever they travel: the query (`access_token`, the token
 * address's `secret`), `Authorization`, and the fields of token requests and answers.
 */

const CREDENTIAL_NAME = /access_token|secret|password/i
export const REDACTED = '[redacted]'

/** The path and query with credential values replaced. */
export function redactUrl(url: string): string {
  const at = url.indexOf('?')
  if (at < 0) return url
  const parts = url
    .slice(at + 1)
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=')
      const name = eq < 0 ? part : part.slice(0, eq)
      let decoded = name
      try {
        decoded = decodeURIComponent(name.replace(/\+/g, ' '))
      } catch {
        // Kept as written.
      }
      return CREDENTIAL_NAME.test(decoded) ? `${name}=${REDACTED}` : part
    })
  return `${url.slice(0, at)}?${parts.join('&')}`
}

/** The path alone, for log lines: a query may carry a token. */
export function pathOnly(url: string): string {
  const at = url.search(/[?#]/)
  return at < 0 ? url : url.slice(0, at)
}

/** A header as the page may show it: `Authorization` keeps its scheme and, for Basic, the user name. */
export function redactHeader(name: string, value: string): string {
  const lower = name.toLowerCase()
  if (lower === 'authorization' || lower === 'proxy-authorization') {
    const [scheme = '', credentials = ''] = value.trim().split(/\s+/, 2)
    if (/^basic$/i.test(scheme)) {
      const decoded = Buffer.from(credentials, 'base64').toString('utf8')
      const colon = decoded.indexOf(':')
      return colon < 0 ? `${scheme} ${REDACTED}` : `${scheme} ${REDACTED} (user ${JSON.stringify(decoded.slice(0, colon))})`
    }
    return `${scheme} ${REDACTED}`
  }
  if (lower === 'cookie' || lower === 'set-cookie') return REDACTED
  return value
}

/** Token requests' and answers' text: credential fields of a form or a JSON object replaced. */
export function redactCredentials(text: string): string {
  return text
    .replace(/("(?:access_token|secret|client_secret|appsecret|password)"\s*:\s*)"(?:[^"\\]|\\.)*"/gi, `$1"${REDACTED}"`)
    .replace(/((?:^|[&?])[^=&]*(?:access_token|secret|password)[^=&]*=)[^&\s]*/gi, `$1${REDACTED}`)
}

/** A short, one-way name for a token, so that a delivery can be linked to the request that issued it. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex').slice(0, 16)
}

/** The token a delivery presents: in the query, as a Bearer credential, or as a form field. */
export function presentedToken(url: string, headers: readonly [string, string][], body: Uint8Array): string | undefined {
  const query = url.indexOf('?') < 0 ? '' : url.slice(url.indexOf('?') + 1)
  const fromQuery = new URLSearchParams(query).get('access_token')
  if (fromQuery) return fromQuery
  for (const [name, value] of headers) {
    const bearer = /^bearer\s+(\S+)/i.exec(value)
    if (name.toLowerCase() === 'authorization' && bearer?.[1]) return bearer[1]
  }
  const type = headers.find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? ''
  if (/application\/x-www-form-urlencoded/i.test(type) && body.byteLength <= 64 * 1024) {
    return new URLSearchParams(new TextDecoder().decode(body)).get('access_token') ?? undefined
  }
  return undefined
}
