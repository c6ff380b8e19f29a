import { createHash } from 'node:crypto'

/**
 * What may leave the inspector's process (for its page, its `--json` lines, its log lines and its
 * exports): credentials are replaced wherever they travel: the query (`access_token`, the token
 * address's `secret`, a `password`), `Authorization`, cookies, and the fields of token requests
 * and answers. The page, HAR and fixtures get a marker; commands read each credential back from
 * an environment variable ({@link credentialVariable}).
 */

/**
 * What makes a name (a query parameter's, a form field's, a JSON key's, a header's) a credential's:
 * the protocol's own (`access_token`, the token address's `secret`) and what senders and their
 * tools commonly use (`token`, `id_token`, `client_secret`, `password`, `passwd`, `api_key`,
 * `X-Api-Key`). One rule for every view and export, so that none shows what another hides.
 */
const CREDENTIAL_WORD = /token|secret|passw|api[-_ ]?key/i
/** Headers whose whole value is a credential, whatever their name says. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie'])
export const REDACTED = '[redacted]'

/**
 * A field's name as a form or a query reads it: `+` a space, each valid `%XX` its byte, an
 * invalid `%` kept (as `URLSearchParams` does, so that `secr%65t%` cannot slip past). Bytes read
 * as latin1: the names matched are ASCII.
 */
export function decodeName(name: string): string {
  return name.replace(/\+/g, ' ').replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
}

/** A query parameter's or a form field's name, as written (maybe percent-encoded), names a credential. */
export function isCredentialName(name: string): boolean {
  return CREDENTIAL_WORD.test(decodeName(name))
}

/** The path, and the query's parameters as written (`name=value`), split at `&`. */
function splitQuery(url: string): { path: string; parts: string[] } {
  const at = url.indexOf('?')
  if (at < 0) return { path: url, parts: [] }
  return { path: url.slice(0, at), parts: url.slice(at + 1).split('&') }
}

const nameOf = (part: string) => (part.indexOf('=') < 0 ? part : part.slice(0, part.indexOf('=')))

/** The path and query with credential values replaced. */
export function redactUrl(url: string): string {
  const { path, parts } = splitQuery(url)
  if (!url.includes('?')) return url
  return `${path}?${parts.map((part) => (isCredentialName(nameOf(part)) ? `${nameOf(part)}=${REDACTED}` : part)).join('&')}`
}

/** A credential taken out of a query: its name as written, and the variable a command reads its value from. */
export interface LeftOut {
  name: string
  variable: string
}

/**
 * Where the environment variables an export reads for what a sender sent live: a name the sender
 * chose (`_secret`, `.secret`, `password`) maps under this prefix, which none of hookguard's own
 * variables (`HOOKGUARD_SECRET`, `HOOKGUARD_PASSWORD`, `HOOKGUARD_APP_SECRET`…) starts with, so
 * that running an export never sends a credential the developer set for hookguard itself.
 */
export const SENT_PREFIX = 'HOOKGUARD_SENT_'

/**
 * The environment variable a command reads a credential from: `HOOKGUARD_ACCESS_TOKEN` for the
 * protocol's own `access_token` (read decoded, as the receiver reads it), which the developer
 * fetches for the purpose; any other name under {@link SENT_PREFIX}, in capitals (`client_secret`:
 * `HOOKGUARD_SENT_CLIENT_SECRET`). Letters, digits and `_` only: safe in any shell.
 */
export function credentialVariable(name: string): string {
  const decoded = decodeName(name)
  return decoded === 'access_token' ? 'HOOKGUARD_ACCESS_TOKEN' : sentVariable(decoded)
}

/** The variable under {@link SENT_PREFIX} for a name a sender chose (a field's, a header's). */
export function sentVariable(name: string): string {
  const word = name
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 48)
  return `${SENT_PREFIX}${word === '' ? 'VALUE' : word}`
}

/** A header whose value is a credential: `Authorization`, cookies, or a name such as `X-Api-Key` or `X-Auth-Token`. */
export function isCredentialHeader(name: string): boolean {
  const lower = name.toLowerCase()
  return CREDENTIAL_HEADERS.has(lower) || CREDENTIAL_WORD.test(lower)
}

/** A header as the page may show it: `Authorization` keeps its scheme and, for Basic, the user name. */
export function redactHeader(name: string, value: string): string {
  const lower = name.toLowerCase()
  if (lower === 'authorization' || lower === 'proxy-authorization') {
    const [scheme = '', credentials] = value.trim().split(/\s+/, 2)
    // One word is no scheme and its credentials but the credential alone (`Authorization: sk_live_…`).
    if (credentials === undefined) return REDACTED
    if (/^basic$/i.test(scheme)) {
      const user = basicUser(credentials)
      return user === undefined ? `${scheme} ${REDACTED}` : `${scheme} ${REDACTED} (user ${JSON.stringify(user)})`
    }
    return `${scheme} ${REDACTED}`
  }
  return isCredentialHeader(lower) ? REDACTED : value
}

/** The user name of Basic credentials (base64 of `user:password`), when they decode to one. */
export function basicUser(credentials: string): string | undefined {
  const decoded = Buffer.from(credentials, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  return colon < 0 ? undefined : decoded.slice(0, colon)
}

/**
 * Token requests' and answers' text: credential fields of a form or a JSON object replaced, a
 * form field's name read decoded (`secr%65t`).
 */
export function redactCredentials(text: string): string {
  return text
    .replace(/("((?:[^"\\]|\\.)*)"\s*:\s*)"(?:[^"\\]|\\.)*"/g, (member: string, key: string, name: string) =>
      CREDENTIAL_WORD.test(name) ? `${key}"${REDACTED}"` : member,
    )
    .replace(/(^|[&?])([^=&]*)=([^&\s]*)/g, (field: string, before: string, name: string) =>
      isCredentialName(name) ? `${before}${name}=${REDACTED}` : field,
    )
}

/** The body is a form (`application/x-www-form-urlencoded`), by its `Content-Type`: its fields may be credentials. */
export function isFormBody(headers: readonly [string, string][]): boolean {
  const type = headers.find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? ''
  return /application\/x-www-form-urlencoded/i.test(type)
}

/** A form field, split at `&`, that holds a credential: its name as written, and the variable a command reads its value from. */
export type FormPiece = { text: string } | LeftOut

/**
 * A form body split into its text (as latin1, byte for byte) and its credential fields' values,
 * each one standing where the value was: `name=` stays in the text before it.
 */
export function formPieces(body: Uint8Array): FormPiece[] {
  const pieces: FormPiece[] = []
  let text = ''
  const fields = Buffer.from(body).toString('latin1').split('&')
  fields.forEach((field, index) => {
    const separator = index === 0 ? '' : '&'
    const at = field.indexOf('=')
    const name = at < 0 ? field : field.slice(0, at)
    if (at < 0 || !isCredentialName(name)) {
      text += `${separator}${field}`
      return
    }
    pieces.push({ text: `${text}${separator}${name}=` })
    pieces.push({ name, variable: credentialVariable(name) })
    text = ''
  })
  if (text !== '') pieces.push({ text })
  return pieces
}

/** The form body with each credential field's value replaced by `value(piece)`; other bytes as they are. */
export function rebuildForm(body: Uint8Array, value: (credential: LeftOut) => string): Uint8Array {
  const text = formPieces(body)
    .map((piece) => ('text' in piece ? piece.text : value(piece)))
    .join('')
  return new Uint8Array(Buffer.from(text, 'latin1'))
}

/** What may be shown of a body: a form's credential fields' values `[redacted]`; any other body as it is. */
export function redactBody(headers: readonly [string, string][], body: Uint8Array): Uint8Array {
  return isFormBody(headers) && formPieces(body).some((piece) => !('text' in piece)) ? rebuildForm(body, () => REDACTED) : body
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
