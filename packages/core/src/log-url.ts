/**
 * The query parameters that carry a credential: the OAuth token a delivery travels with (the
 * service's convention), and the app secret of the token address (`secret`, or `client_secret`
 * from OAuth clients). Access logs write the request URL, query and all.
 */
const CREDENTIAL_PARAMETERS = new Set(['access_token', 'secret', 'client_secret'])

/**
 * A request URL (path and query) fit for a log: every query parameter that carries a credential is
 * left out, the rest is kept byte for byte. Names are decoded as the receiver decodes them
 * (`acc%65ss_token` is `access_token` there, so it is here).
 *
 * @example
 * urlForLog('/webhooks?access_token=eyJ…&tenant=acme') // '/webhooks?tenant=acme'
 */
export function urlForLog(url: string): string {
  const start = url.indexOf('?')
  if (start === -1) return url
  const kept = url
    .slice(start + 1)
    .split('&')
    .filter((field) => {
      const [name] = new URLSearchParams(field).keys()
      return name === undefined || !CREDENTIAL_PARAMETERS.has(name)
    })
  return kept.length === 0 ? url.slice(0, start) : `${url.slice(0, start)}?${kept.join('&')}`
}
