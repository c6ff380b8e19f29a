import { createHash } from 'node:crypto'
import { timingSafeEqual } from '@hookguard/core/adapter'
import { Hono } from 'hono'
import { APP_CSS, APP_JS } from './page/bundle.generated.ts'
import { actionRoutes } from './ui-actions.ts'
import type { UiContext } from './ui-context.ts'
import { eventRoutes } from './ui-events.ts'
import { recordRoutes } from './ui-records.ts'

/**
 * The page's server: loopback only, one access token per run, the `Host` header checked (DNS
 * rebinding), a foreign `Origin` refused on every action, and a strict CSP. It sends the page
 * codes, statuses and redacted text, never a secret.
 */

/**
 * The access token travels in the `X-Inspect-Token` header of each API call, never in a cookie:
 * browsers scope cookies by host, not port, so any server on 127.0.0.1 the browser visits would
 * receive one and could replay it. The printed address carries the token in its fragment
 * (`/#token=…`), which no browser sends to a server; the page keeps it in the tab's
 * `sessionStorage` (scoped to scheme, host and port) and adds the header itself.
 */
export const TOKEN_HEADER = 'x-inspect-token'
/** The page's shell: served to anyone who passes the Host check, since it holds no data. */
const SHELL = new Set(['/', '/favicon.ico', '/app.js', '/app.css'])

/** No inline script or style, nothing from elsewhere: a payload that slips into markup cannot run. */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hookguard inspect</title>
<link rel="stylesheet" href="/app.css">
</head>
<body>
<div id="app"><p class="connecting">Connecting…</p></div>
<script src="/app.js"></script>
</body>
</html>
`

/** Both sides hashed first, so that the comparison's time tells nothing of the expected value's length either. */
function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest()
  return timingSafeEqual(digest(given), digest(expected))
}

export function createUiApp(context: UiContext): Hono {
  const { accessToken } = context
  const app = new Hono()

  app.use('*', async (c, next) => {
    // DNS rebinding: a hostile page's name resolved to 127.0.0.1 still says its own name in Host.
    const host = c.req.header('host')?.toLowerCase()
    if (host === undefined || !context.allowedHosts().has(host)) {
      return c.text('This inspector answers only to its own address.', 421, securityHeaders())
    }
    await next()
    for (const [name, value] of Object.entries(securityHeaders())) c.header(name, value)
  })

  app.use('*', async (c, next) => {
    // The page's shell (markup, script, style: no data) loads without the token; the page then
    // reads it from its address's fragment, and asks the API with it.
    if ((c.req.method === 'GET' || c.req.method === 'HEAD') && SHELL.has(c.req.path)) return next()
    if (!sameSecret(c.req.header(TOKEN_HEADER), accessToken)) {
      return c.json(
        { error: 'access_token_required', message: 'Open the address `hookguard inspect` printed: it carries this run’s access token.' },
        401,
      )
    }
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      // Actions only from this page, under any of its names (127.0.0.1, localhost, [::1] with its
      // port): a foreign Origin, or a browser that says the request is cross-site, is refused.
      const origin = c.req.header('origin')?.toLowerCase()
      if (origin !== undefined && !(origin.startsWith('http://') && context.allowedHosts().has(origin.slice('http://'.length)))) {
        return c.text('Foreign origin.', 403)
      }
      const site = c.req.header('sec-fetch-site')
      if (site !== undefined && site !== 'same-origin' && site !== 'none') return c.text('Cross-site request.', 403)
    }
    await next()
  })

  app.get('/', (c) => c.html(PAGE))
  app.get('/favicon.ico', (c) => c.body(null, 204))
  app.get('/app.js', (c) => c.body(APP_JS, 200, { 'content-type': 'text/javascript; charset=utf-8' }))
  app.get('/app.css', (c) => c.body(APP_CSS, 200, { 'content-type': 'text/css; charset=utf-8' }))

  recordRoutes(app, context)
  actionRoutes(app, context)
  eventRoutes(app, context)
  return app
}

function securityHeaders(): Record<string, string> {
  return {
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'cache-control': 'no-store',
  }
}
