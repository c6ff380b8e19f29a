import { decodeUtf8, fromBase64, toBase64, utf8 } from './bytes.ts'

export interface BasicCredentials {
  username: string
  password: string
}

const SCHEME = /^basic$/i

/**
 * Reads an `Authorization: Basic …` header (RFC 7617): the scheme in any case, base64 of UTF-8
 * `username:password`, split at the first colon since a password may hold colons.
 * `'missing'` when there is no header or another scheme; `'malformed'` for bad base64, bytes that
 * are not UTF-8, or no colon.
 */
export function parseBasicAuthorization(header: string | null | undefined): BasicCredentials | 'missing' | 'malformed' {
  if (!header) return 'missing'
  const trimmed = header.trim()
  const space = trimmed.indexOf(' ')
  const scheme = space === -1 ? trimmed : trimmed.slice(0, space)
  if (!SCHEME.test(scheme)) return 'missing'
  // Stryker disable next-line ConditionalExpression,UnaryOperator: equivalent — the bare scheme is 5 characters, never valid base64: 'malformed' either way (→ true is killed)
  if (space === -1) return 'malformed'
  const bytes = fromBase64(trimmed.slice(space + 1).trim())
  // Stryker disable next-line ConditionalExpression: equivalent — decoding undefined throws (Node) or gives '' without a colon (Web): 'malformed' either way
  if (bytes === undefined) return 'malformed'
  let text: string
  try {
    text = decodeUtf8(bytes)
  } catch {
    return 'malformed'
  }
  const colon = text.indexOf(':')
  if (colon === -1) return 'malformed'
  return { username: text.slice(0, colon), password: text.slice(colon + 1) }
}

/** The header value the service sends: `Basic base64(utf8(username:password))`. */
export function formatBasicAuthorization(username: string, password: string): string {
  if (username.includes(':')) throw new TypeError('@hookguard/core: a Basic username cannot contain a colon (RFC 7617)')
  return `Basic ${toBase64(utf8(`${username}:${password}`))}`
}

/** The `WWW-Authenticate` challenge (RFC 7617 §2 and §2.1). */
export function basicChallenge(realm: string): string {
  return `Basic realm="${realm.replace(/["\\]/g, '\\$&')}", charset="UTF-8"`
}
