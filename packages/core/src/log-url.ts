/**
 * The words that make a query field or a path segment a credential's, in any case and as part of
 * anything longer: the OAuth token a delivery travels with (`access_token`, the service's
 * convention), and the app secret of the token address (`secret`, `client_secret` from OAuth
 * clients). Access logs write the request URL, query and all.
 */
const CREDENTIAL = /access_token|secret/

/** A credential field written inside a value: the word, then spaces or brackets, then `=`. */
const CREDENTIAL_FIELD = /(?:access_token|secret)[\s[\]]*=/

/**
 * Where a path stops being one, for a log: a `;` (a matrix parameter, or a query separator to
 * some routers), an escaped `?` or `;` (`%3F`, `%3B`), which the router keeps in the path, or an
 * escaped `%` (`%25`), behind which an escape escaped twice (`%253F`) hides; a mistyped address
 * carries its query there as well (`/webhook%3Faccess_token=…`).
 */
const PATH_END = /;|%3f|%3b|%25/i

/** How many times a text is decoded at most: an escape escaped twice, and once more. */
const DECODINGS = 3

/**
 * A request URL (path and query) fit for a log. It carries no credential in any shape a mistyped
 * or mis-encoded address can give it, at the price of leaving out more than a credential at times:
 *
 * - the fragment (`#…`) is left out whole: no client sends one, and no receiver reads it;
 * - the path is kept up to its first `;`, `%3F`, `%3B` or `%25` (any case), the mark included,
 *   and up to (not including) its first segment that names a credential, the `/` before it
 *   included; the rest of the path is left out. The router takes it for path, so a query written
 *   there (`/webhook%3Faccess_token=…`, `/webhook;secret=…`, `/webhook%253Faccess_token=…`,
 *   `/webhooks/access_token=…`, `/webhooks:access_token=…`) would otherwise be logged whole;
 * - in the query (after the first `?`), fields are split at `&`, `;` and `?` (a webhook address
 *   with a query of its own gets the token after a second `?`). A field is left out when its name
 *   (up to its first `=`) contains `access_token` or `secret` (so `client_secret`), or its value
 *   contains `access_token=` or `secret=` (spaces or brackets allowed before the `=`). Both are
 *   read in any case, as they are written and as decoded once, twice and three times (`+` a
 *   space, each `%XX` its byte), so `+access_token`, `access_token[]`, `acc%2565ss_token`,
 *   `access_token%3D…` (no `=`: all name) are left out. The other fields are kept byte for byte,
 *   with the separators they came with.
 *
 * @example
 * urlForLog('/webhooks?access_token=eyJ…&tenant=acme') // '/webhooks?tenant=acme'
 * urlForLog('/webhooks?tenant=acme?access_token=eyJ…') // '/webhooks?tenant=acme'
 * urlForLog('/webhook%3Faccess_token=eyJ…') // '/webhook%3F'
 * urlForLog('/webhooks/access_token=eyJ…') // '/webhooks/'
 */
export function urlForLog(url: string): string {
  const fragment = url.indexOf('#')
  const target = fragment === -1 ? url : url.slice(0, fragment)
  const start = target.indexOf('?')
  const path = pathForLog(start === -1 ? target : target.slice(0, start))
  if (start === -1) return path
  const query = queryForLog(target.slice(start + 1))
  return query === undefined ? path : `${path}?${query}`
}

/** The path up to its first mark (included) or its first segment naming a credential (excluded). */
function pathForLog(path: string): string {
  const mark = PATH_END.exec(path)
  const end = mark === null ? path.length : mark.index
  // Where the segment read starts: past the `/` before it.
  let at = 0
  for (const segment of path.slice(0, end).split('/')) {
    if (decodings(segment).some((text) => CREDENTIAL.test(text))) return path.slice(0, at)
    at += segment.length + 1
  }
  // The segment the mark is in, past the mark, is left out with the rest.
  return mark === null ? path : path.slice(0, end + mark[0].length)
}

/** The query without its credential fields; `undefined` when none is left. */
function queryForLog(query: string): string | undefined {
  // Fields at even indexes, each separator between the two fields it parts.
  const parts = query.split(/([&;?])/)
  let kept: string | undefined
  for (let index = 0; index < parts.length; index += 2) {
    const field = parts[index] as string
    const equals = field.indexOf('=')
    const name = equals === -1 ? field : field.slice(0, equals)
    const value = equals === -1 ? '' : field.slice(equals + 1)
    if (decodings(name).some((text) => CREDENTIAL.test(text))) continue
    if (decodings(value).some((text) => CREDENTIAL_FIELD.test(text))) continue
    kept = kept === undefined ? field : `${kept}${parts[index - 1]}${field}`
  }
  return kept
}

/**
 * The text lower-cased as written and as decoded once, twice and three times: `+` a space, each
 * `%XX` its byte as a character (enough to read ASCII words; a malformed escape stays as it is).
 * Every stage is read, as a decoding can undo a word too (`%access_token` decodes `%ac`).
 */
function decodings(text: string): string[] {
  const stages = [text.toLowerCase()]
  let current = text
  for (let round = 0; round < DECODINGS && /[+%]/.test(current); round += 1) {
    current = current.replaceAll('+', ' ').replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    stages.push(current.toLowerCase())
  }
  return stages
}
