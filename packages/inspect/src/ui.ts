import { createHash } from 'node:crypto'
import { timingSafeEqual } from '@hookguard/core/adapter'
import { type Context, Hono } from 'hono'
import { streamSSE } from 'hono/streaming'
import { type Preset, presetRequest, presetsFor, replay, type SentAnswer, sendRaw } from './actions.ts'
import { diffRecords } from './diff.ts'
import { type ExportFormat, exportAs } from './export.ts'
import type { InspectorSettings } from './options.ts'
import { APP_CSS, APP_JS } from './page/bundle.generated.ts'
import type { InspectedRecord } from './record.ts'
import type { Ring } from './ring.ts'
import { SOURCE_HEADER, type SourceMark } from './source-mark.ts'
import { StreamQueue } from './stream-queue.ts'
import { detail, type RecordSummary, summarize } from './view.ts'

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
const MAX_REPLAYS = 20
/** The page's shell: served to anyone who passes the Host check, since it holds no data. */
const SHELL = new Set(['/', '/favicon.ico', '/app.js', '/app.css'])
const EXPORTS = new Set<ExportFormat>(['send', 'curl', 'har', 'fixture', 'fixture-test'])

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

export interface UiContext {
  settings: InspectorSettings
  ring: Ring
  accessToken: string
  /** This run's mark on the page's own requests, so that their rows say so. */
  mark: SourceMark
  /** The receiving address, for actions and exports. */
  receiveUrl(): URL
  /** The host names (with the port) the page answers to. */
  allowedHosts(): Set<string>
  subscribe(listener: (event: UiEvent) => void): () => void
  rememberPreset(key: string, preset: { name: string; expected: string }): void
  /** Tells every open page. */
  publish(event: UiEvent): void
}

/** What changed in the ring: a record kept, records dropped (evicted by the bounds, or deleted), all dropped. */
export type UiEvent = { type: 'record'; summary: RecordSummary } | { type: 'deleted'; ids: number[] } | { type: 'cleared' }

/**
 * The page's stream, one server-sent event per entry: `ready` first, with every record the ring
 * keeps (taken in the same turn as the subscription, so that nothing falls between the two), then
 * each change. A page that reads too slowly gets `ready` again instead of the changes it missed.
 */
export interface StreamData {
  ready: { records: RecordSummary[] }
  record: RecordSummary
  deleted: { ids: number[] }
  cleared: Record<string, never>
}

/** What `/api/state` answers: the page's settings, and the records kept, oldest first. */
export interface PageState {
  mode: InspectorSettings['auth']['mode']
  forwardTo: string | null
  receive: string
  maxBodySize: number
  presets: Preset[]
  canResend: boolean
  records: RecordSummary[]
}

/** Both sides hashed first, so that the comparison's time tells nothing of the expected value's length either. */
function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest()
  return timingSafeEqual(digest(given), digest(expected))
}

export function createUiApp(context: UiContext): Hono {
  const { settings, ring, accessToken } = context
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

  app.get('/api/state', (c) =>
    c.json({
      mode: settings.auth.mode,
      forwardTo: settings.forwardTo?.origin ?? null,
      receive: context.receiveUrl().origin,
      maxBodySize: settings.maxBodySize,
      presets: presetsFor(settings.auth.mode),
      canResend: settings.deliver !== undefined,
      records: ring.all().map((record) => summarize(record)),
    } satisfies PageState),
  )

  app.get('/api/records/:id', (c) => {
    const record = found(c)
    if (record === undefined) return notFound(c)
    const usedBy = ring
      .all()
      .filter((r) => r.tokenId === record.id)
      .map((r) => r.id)
    return c.json(detail(record, usedBy))
  })

  app.get('/api/records/:id/export/:format', (c) => {
    const record = found(c)
    if (record === undefined || record.kind !== 'delivery') return notFound(c)
    const format = c.req.param('format') as ExportFormat
    if (!EXPORTS.has(format)) return c.json({ error: 'unknown_format' }, 400)
    const { text, filename, type } = exportAs(format, record, exportContext(context))
    const headers: Record<string, string> = { 'content-type': type }
    if (c.req.query('download') !== undefined) headers['content-disposition'] = `attachment; filename="${filename}"`
    return c.body(text, 200, headers)
  })

  app.get('/api/diff', (c) => {
    const a = ring.get(Number(c.req.query('a')))
    const b = ring.get(Number(c.req.query('b')))
    if (a === undefined || b === undefined || a.kind !== 'delivery' || b.kind !== 'delivery') return notFound(c)
    return c.json(diffRecords(a, b))
  })

  app.post('/api/records/:id/replay', async (c) => {
    const record = found(c)
    if (record === undefined || record.kind !== 'delivery') return notFound(c)
    const { count = 1 } = await jsonBody<{ count?: number }>(c)
    if (!Number.isInteger(count) || count < 1 || count > MAX_REPLAYS) return c.json({ error: 'invalid_count' }, 400)
    return c.json({ answers: await replay(context.receiveUrl(), record, count, context.mark.value('replay')) })
  })

  app.post('/api/resend', async (c) => {
    const deliver = settings.deliver
    if (deliver === undefined) return c.json({ error: 'resend_unavailable', message: 'Resending needs @hookguard/emulator.' }, 501)
    const { path = '/', body } = await jsonBody<{ path?: string; body?: string }>(c)
    if (typeof body !== 'string') return c.json({ error: 'invalid_request' }, 400)
    const receive = context.receiveUrl()
    const url = resendTarget(receive, path)
    if (url === undefined) return invalidPath(c)
    // The request goes through the emulator, marked as a resend for its row.
    const marked: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers)
      if (new URL(input instanceof Request ? input.url : String(input)).pathname !== settings.tokenPath) {
        headers.set(SOURCE_HEADER, context.mark.value('resend'))
      }
      return fetch(input, { ...init, headers })
    }
    const { auth } = settings
    const base = { url, payload: body, fetch: marked }
    const answer = await deliver(
      auth.mode === 'secret'
        ? { ...base, mode: 'secret', secret: settings.secrets[0] as string, signatureHeader: settings.signatureHeader }
        : auth.mode === 'basic'
          ? { ...base, mode: 'basic', username: auth.username, password: auth.password }
          : auth.mode === 'oauth2'
            ? { ...base, mode: 'oauth2', tokenUrl: new URL(settings.tokenPath, receive), appId: auth.appId, appSecret: auth.secret }
            : { ...base, mode: 'none' },
    )
    let code: string | undefined
    try {
      code = (JSON.parse(answer.body) as { error?: string }).error
    } catch {
      // Not a refusal.
    }
    const sent: SentAnswer = { status: answer.status, ...(typeof code === 'string' && { code }) }
    return c.json({ answers: [sent] })
  })

  app.post('/api/preset', async (c) => {
    const { name, path = '/', body = '{}' } = await jsonBody<{ name?: string; path?: string; body?: string }>(c)
    const preset: Preset | undefined = presetsFor(settings.auth.mode).find((p) => p.name === name)
    if (preset === undefined || typeof body !== 'string') return c.json({ error: 'invalid_request' }, 400)
    const url = resendTarget(context.receiveUrl(), path)
    if (url === undefined) return invalidPath(c)
    const key = crypto.randomUUID()
    context.rememberPreset(key, { name: preset.name, expected: preset.expected })
    const request = await presetRequest(settings, preset.name, `${url.pathname}${url.search}`, body)
    const answer = await sendRaw(context.receiveUrl(), request, context.mark.value('preset', key))
    return c.json({ answers: [answer], expected: preset.expected })
  })

  app.delete('/api/records/:id', (c) => {
    const id = Number(c.req.param('id'))
    if (!ring.delete(id)) return notFound(c)
    context.publish({ type: 'deleted', ids: [id] })
    return c.json({ deleted: true })
  })
  app.delete('/api/records', (c) => {
    ring.clear()
    context.publish({ type: 'cleared' })
    return c.json({ cleared: true })
  })

  app.get('/api/events', (c) =>
    streamSSE(c, async (stream) => {
      // A page that reads slower than deliveries arrive is sent the ring again instead of a backlog.
      const queue = new StreamQueue<UiEvent>(2 * settings.maxRecords)
      let wake: (() => void) | undefined
      const unsubscribe = context.subscribe((event) => {
        queue.push(event)
        wake?.()
      })
      const ready = () => sse('ready', { records: ring.all().map((record) => summarize(record)) })
      // Taken in the subscription's turn: every later change is in the queue.
      let text = ready()
      let open = true
      stream.onAbort(() => {
        open = false
        wake?.()
      })
      while (open) {
        const { resync, items } = queue.take()
        if (resync) text = ready()
        // Everything queued in one write: a burst costs the page one read, not one per delivery.
        for (const event of items) {
          text +=
            event.type === 'record'
              ? sse('record', event.summary)
              : event.type === 'deleted'
                ? sse('deleted', { ids: event.ids })
                : sse('cleared', {})
        }
        if (text !== '') {
          await stream.write(text)
          text = ''
          continue
        }
        // A comment every 15 s keeps proxies and idle timers from closing the stream.
        await new Promise<void>((resolve) => {
          wake = resolve
          setTimeout(resolve, 15_000).unref()
        })
        wake = undefined
        if (queue.empty && open) await stream.write(': ping\n\n')
      }
      unsubscribe()
    }),
  )

  function found(c: Context): InspectedRecord | undefined {
    const id = Number(c.req.param('id'))
    return Number.isInteger(id) ? ring.get(id) : undefined
  }

  async function jsonBody<T>(c: Context): Promise<Partial<T>> {
    const length = Number(c.req.header('content-length') ?? '0')
    if (length > settings.maxBodySize + 64 * 1024) return {}
    try {
      const value = (await c.req.json()) as unknown
      return typeof value === 'object' && value !== null ? (value as Partial<T>) : {}
    } catch {
      return {}
    }
  }

  return app
}

function invalidPath(c: Context) {
  return c.json(
    {
      error: 'invalid_path',
      message:
        'The path must be a path of the receiving address (starting with one /), with no space or control character: write them %-encoded.',
    },
    400,
  )
}

/** One server-sent event; JSON text holds no line break, so its data is one line. */
function sse<K extends keyof StreamData>(event: K, data: StreamData[K]): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
}

function notFound(c: Context) {
  return c.json({ error: 'not_found' }, 404)
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

function exportContext({ settings, receiveUrl }: UiContext) {
  const { auth } = settings
  return {
    url: (settings.forwardTo ?? receiveUrl()).toString(),
    signatureHeader: settings.signatureHeader,
    tokenPath: settings.tokenPath,
    ...(auth.mode === 'basic' && { username: auth.username }),
    ...(auth.mode === 'oauth2' && { appId: auth.appId }),
  }
}

/**
 * `path` (and its query) on the receiving address, for a resend and a preset alike; undefined
 * when it is no path of that address: not text, not starting with `/`, holding whitespace or a
 * control character (which a request line cannot carry, and which `URL` would drop or encode
 * unseen: a CR LF would else be taken out silently), or naming another host (`//host/x`,
 * `/\\host/x`: a recorded path is the sender's, and the request is signed with the configured
 * credentials).
 */
export function resendTarget(receive: string | URL, path: unknown): URL | undefined {
  if (typeof path !== 'string' || !path.startsWith('/') || /[\s\p{Cc}]/u.test(path)) {
    return undefined
  }
  const base = new URL(receive)
  const url = new URL(path, base)
  return url.origin === base.origin ? url : undefined
}
