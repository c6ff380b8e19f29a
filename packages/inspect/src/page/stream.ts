import type { StreamData } from '../ui-context.ts'
import { authorized, NoToken } from './api.ts'

/** One event of the server's stream, typed by its name. */
export type StreamEvent = { [K in keyof StreamData]: { type: K; data: StreamData[K] } }[keyof StreamData]

const RETRY_MS = 2000

/**
 * The server's event stream, read with fetch so that it carries the token in its header
 * (EventSource sends none): server-sent events parsed here, and the stream opened again when it
 * drops (`onDown` is told). Each opening starts with `ready`, which carries every record kept, so
 * nothing that happened meanwhile is missed. Returns only when the token is refused.
 */
export async function follow(onEvent: (event: StreamEvent) => void, onDown: () => void): Promise<void> {
  for (;;) {
    try {
      const response = await authorized('/api/events', { headers: { accept: 'text/event-stream' } })
      if (!response.ok || response.body === null) throw new Error(String(response.status))
      const reader = response.body.getReader()
      const decoder = new TextDecoder()
      let buffer = ''
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true })
        // One pass over what arrived: a read that holds a burst's events is not copied once per event.
        let start = 0
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n', start)) {
          const event = parse(buffer.slice(start, end))
          start = end + 2
          if (event !== undefined) onEvent(event)
        }
        buffer = buffer.slice(start)
      }
    } catch (error) {
      if (error instanceof NoToken) return
    }
    onDown()
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS))
  }
}

/** One event block (the server writes `\n` line ends); undefined for a comment or an unknown event. */
function parse(block: string): StreamEvent | undefined {
  let type = ''
  const data: string[] = []
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
    if (field === 'event') type = text
    else if (field === 'data') data.push(text)
  }
  if (type !== 'ready' && type !== 'record' && type !== 'deleted' && type !== 'cleared') return undefined
  return { type, data: JSON.parse(data.join('\n') || '{}') } as StreamEvent
}
