import type { Hono } from 'hono'
import { streamSSE } from 'hono/streaming'
import { StreamQueue } from './stream-queue.ts'
import type { StreamData, UiContext, UiEvent } from './ui-context.ts'
import { summarize } from './view.ts'

/** The page's stream of changes to the ring (`StreamData`). */
export function eventRoutes(app: Hono, context: UiContext): void {
  const { settings, ring } = context
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
}

/** One server-sent event; JSON text holds no line break, so its data is one line. */
function sse<K extends keyof StreamData>(event: K, data: StreamData[K]): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
}
