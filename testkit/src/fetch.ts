import type { Outgoing, Reply } from './exchange.ts'

// No Node module and no vitest here: Bun, Deno and the workerd bundle use these too.

/** Sends to a fetch-shaped app (Hono's `app.request`) in process, with no server. */
export async function sendToFetch(
  request: (path: string, init: RequestInit) => Response | Promise<Response>,
  { method = 'POST', path, headers = {}, body, stream }: Outgoing,
): Promise<Reply> {
  const requestHeaders = { ...headers }
  const init: RequestInit & { duplex?: 'half' } = { method, headers: requestHeaders }
  let pulled = 0
  if (body !== undefined) {
    const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : new Uint8Array(body)
    init.body = bytes
    // What any HTTP client would declare; a Request made in process has none of its own.
    requestHeaders['content-length'] ??= String(bytes.byteLength)
  } else if (stream !== undefined) {
    init.duplex = 'half'
    init.body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          const chunk = stream[pulled]
          if (chunk !== undefined) {
            pulled++
            controller.enqueue(chunk.slice())
          } else {
            controller.close()
          }
        },
      },
      { highWaterMark: 0 },
    )
  }
  const res = await request(path, init)
  const streamedAll = stream === undefined ? undefined : pulled === stream.length
  const replyHeaders: Record<string, string> = {}
  res.headers.forEach((value, name) => {
    replyHeaders[name] = value
  })
  return { status: res.status, headers: replyHeaders, text: await res.text(), streamedAll }
}

const decoder = new TextDecoder()

/** The configured secrets, and every credential, token and body the sender sent. */
export function sensitive(sent: readonly Outgoing[], secrets: readonly string[]): string[] {
  const found = [...secrets]
  for (const { path, headers = {}, body } of sent) {
    const text = typeof body === 'string' ? body : body === undefined ? '' : decoder.decode(body)
    found.push(text)
    // A body with no '=' has no field with a value: not parsed, as the megabyte bodies are not.
    const form = text.includes('=') ? [new URLSearchParams(text)] : []
    for (const fields of [new URL(path, 'http://localhost').searchParams, ...form]) {
      for (const name of ['access_token', 'secret']) found.push(fields.get(name) ?? '')
    }
    const authorization = headers.authorization ?? ''
    found.push(authorization.slice(authorization.indexOf(' ') + 1))
  }
  // Short strings (an empty body, `{}`) would match any answer by chance.
  return found.filter((value) => value.length >= 8)
}
