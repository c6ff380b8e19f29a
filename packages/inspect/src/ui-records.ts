import type { Context, Hono } from 'hono'
import { presetsFor } from './actions.ts'
import { diffRecords } from './diff.ts'
import { type ExportFormat, exportAs } from './export.ts'
import { notFound, type PageState, recordOf, type UiContext } from './ui-context.ts'
import { detail, summarize } from './view.ts'

const EXPORTS = new Set<ExportFormat>(['send', 'curl', 'har', 'fixture', 'fixture-test'])

/** The records the ring keeps: the page's state, one record, its exports, a diff of two; deleting them. */
export function recordRoutes(app: Hono, context: UiContext): void {
  const { settings, ring } = context
  const found = (c: Context) => recordOf(c, ring)

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
