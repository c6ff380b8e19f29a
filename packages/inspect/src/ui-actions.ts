import type { Context, Hono } from 'hono'
import {
  type Preset,
  PresetNotApplicable,
  presetRequest,
  presetsFor,
  type RawRequest,
  replay,
  type SentAnswer,
  sendRaw,
} from './actions.ts'
import { SOURCE_HEADER } from './source-mark.ts'
import { notFound, recordOf, type UiContext } from './ui-context.ts'

const MAX_REPLAYS = 20

/** What the page asks the inspector to send: a replay of a record, an edited resend, a preset. */
export function actionRoutes(app: Hono, context: UiContext): void {
  const { settings, ring } = context
  const found = (c: Context) => recordOf(c, ring)

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
    let request: RawRequest
    try {
      request = await presetRequest(settings, preset.name, `${url.pathname}${url.search}`, body)
    } catch (error) {
      if (error instanceof PresetNotApplicable) return c.json({ error: 'preset_not_applicable', message: error.message }, 400)
      throw error
    }
    const key = crypto.randomUUID()
    context.rememberPreset(key, { name: preset.name, expected: preset.expected })
    const answer = await sendRaw(context.receiveUrl(), request, context.mark.value('preset', key))
    return c.json({ answers: [answer], expected: preset.expected })
  })

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
