import type { WebhookOptions } from '@hookguard/core'
import { tokenEndpoint, webhook } from '@hookguard/hono'
import { type ErrorHandler, Hono } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { type AppSettings, type Received, workDone } from './work.ts'

// The conformance suite's Hono app, apart from the other frameworks and with no Node module, so
// that Bun, Deno and the workerd bundle build the very same app.

/** An app under test and how many times its handler ran. */
export interface HonoUnderTest {
  app: Hono
  handled(): number
}

// Hono's default answer, without the console noise for the cases where a resolver throws.
const quietly: ErrorHandler = (error, c) => (error instanceof HTTPException ? error.getResponse() : c.text('Internal Server Error', 500))

/** Hono's own default handler, logging included, after `passOn` has seen the error. */
const asShipped =
  (passOn: (error: unknown) => void): ErrorHandler =>
  (error, c) => {
    passOn(error)
    if ('getResponse' in error && typeof error.getResponse === 'function') return error.getResponse() as Response
    console.error(error)
    return c.text('Internal Server Error', 500)
  }

export function honoApp(options: WebhookOptions, { passOn, work }: AppSettings = {}): HonoUnderTest {
  let handled = 0
  const app = new Hono()
  if (options.auth.mode === 'oauth2') app.all('/token', tokenEndpoint(options))
  const hook = webhook(passOn === undefined ? options : { ...options, onError: 'throw' })
  app.post('/hooks', hook, async (c) => {
    handled++
    const delivery = c.get('webhook')
    const received: Received = {
      mode: delivery.mode,
      payload: delivery.payload,
      rawLength: delivery.rawBody.byteLength,
      // Read again through Hono: the middleware must have left the body readable.
      rawText: await c.req.text(),
    }
    return c.json(received, (await workDone(work, received)) as 200)
  })
  app.onError(passOn === undefined ? quietly : asShipped(passOn))
  return { app, handled: () => handled }
}
