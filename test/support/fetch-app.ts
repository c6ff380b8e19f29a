import type { WebhookOptions } from '@hookguard/core'
import { tokenEndpoint, WebhookError, webhook } from '@hookguard/fetch'
import { type AppSettings, type Received, workDone } from './work.ts'

// The conformance suite's fetch handler, apart from the other frameworks and with no Node module,
// so that Bun, Deno and the workerd bundle serve the very same handler.

export type FetchHandler = (request: Request) => Promise<Response>

/** A handler under test and how many times the delivery handler ran. */
export interface FetchUnderTest {
  fetch: FetchHandler
  handled(): number
}

const decoder = new TextDecoder()

/**
 * What a platform does with a handler that throws, as its users configure it (`Bun.serve`'s
 * `error`, `Deno.serve`'s `onError`): a refusal answered from the error's own status and headers,
 * anything else a bare 500.
 */
function platformAnswer(error: unknown): Response {
  if (!(error instanceof WebhookError)) return new Response('Internal Server Error', { status: 500 })
  return Response.json({ error: error.code, message: error.message }, { status: error.status, headers: error.headers })
}

/** `POST /hooks` behind `webhook()`, `/token` for mode oauth2, as a router in front of them would dispatch. */
export function fetchApp(options: WebhookOptions, { passOn, work }: AppSettings = {}): FetchUnderTest {
  let handled = 0
  const token = options.auth.mode === 'oauth2' ? tokenEndpoint(options) : undefined
  const hook = webhook(passOn === undefined ? options : { ...options, onError: 'throw' }, async (delivery, request) => {
    handled++
    if (!request.bodyUsed) throw new Error('webhook() handed on a request whose body is unread')
    const received: Received = {
      mode: delivery.mode,
      payload: delivery.payload,
      rawLength: delivery.rawBody.byteLength,
      rawText: decoder.decode(delivery.rawBody),
    }
    return Response.json(received, { status: await workDone(work, received) })
  })
  async function fetch(request: Request): Promise<Response> {
    const { pathname } = new URL(request.url)
    try {
      if (pathname === '/token' && token !== undefined) return await token(request)
      if (pathname === '/hooks' && request.method === 'POST') return await hook(request)
      return new Response('Not Found', { status: 404 })
    } catch (error) {
      passOn?.(error)
      return platformAnswer(error)
    }
  }
  return { fetch, handled: () => handled }
}
