/**
 * The query parameters that carry a credential: the OAuth token a delivery travels with (the
 * service's convention), and the app secret of the token address (`secret`, or `client_secret`
 * from OAuth clients). Access logs write the request URL, query and all.
 */
const CREDENTIAL_PARAMETERS = new Set(['access_token', 'secret', 'client_secret'])

/**
 * Where a path stops being one, for a log: a `;` (a matrix parameter, or a query separator to
 * some routers) or an escaped `?` (`%3F`, `%3f`), which the router keeps in the path; a mistyped
 * address carries its query there as well (`/webhook%3Faccess_token=…`).
 */
const PATH_END = /;|%3f/i

/**
 * A request URL (path and query) fit for a log. It carries no credential in any shape a mistyped
 * or mis-encoded address can give it:
 *
 * - the fragment (`#…`) is left out whole: no client sends one, and no receiver reads it;
 * - the path is kept up to its first `;` or `%3F` (any case), the mark included, and the rest of
 *   the path is left out: the router takes it for path, so a query written there
 *   (`/webhook%3Faccess_token=…`, `/webhook;secret=…`) would otherwise be logged whole;
 * - in the query (after the first `?`), every field whose name is `access_token`, `secret` or
 *   `client_secret` in any case is left out, fields being split at `&` and at `;`; names are
 *   decoded as the receiver decodes them (`acc%65ss_token` is `access_token` there, so it is
 *   here). The other fields are kept byte for byte, with the separators they came with.
 *
 * @example
 * urlForLog('/webhooks?access_token=eyJ…&tenant=acme') // '/webhooks?tenant=acme'
 * urlForLog('/webhook%3Faccess_token=eyJ…') // '/webhook%3F'
 */
export function urlForLog(url: string): string {
  const fragment = url.indexOf('#')
  const target = fragment === -1 ? url : url.slice(0, fragment)
  const start = target.indexOf('?')
  const path = start === -1 ? target : target.slice(0, start)
  const mark = PATH_END.exec(path)
  const kept = mark === null ? path : path.slice(0, mark.index + mark[0].length)
  if (start === -1) return kept
  const query = queryForLog(target.slice(start + 1))
  return query === undefined ? kept : `${kept}?${query}`
}

/** The query without its credential fields; `undefined` when none is left. */
function queryForLog(query: string): string | undefined {
  // Fields at even indexes, each separator between the two fields it parts.
  const parts = query.split(/([&;])/)
  let kept: string | undefined
  for (let index = 0; index < parts.length; index += 2) {
    const field = parts[index] as string
    const [name] = new URLSearchParams(field).keys()
    if (name !== undefined && CREDENTIAL_PARAMETERS.has(name.toLowerCase())) continue
    kept = kept === undefined ? field : `${kept}${parts[index - 1]}${field}`
  }
  return kept
}
