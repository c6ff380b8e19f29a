import type { WebhookOptions } from '@hookguard/core'
import { tokenEndpoint, webhook } from '@hookguard/hono'
import { Hono } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { Received } from '../../test/support/apps.ts'

/** An app under test and how many times its handler ran. */
export interface HonoUnderTest {
  app: Hono
  handled(): number
}

/**
 * The conformance suite's Hono app (`test/support/apps.ts`), again here because that file also
 * loads Express, Koa and `node:http`, which a Worker bundle cannot carry.
 */
export function honoApp(options: WebhookOptions): HonoUnderTest {
  let handled = 0
  const app = new Hono()
  if (options.auth.mode === 'oauth2') app.all('/token', tokenEndpoint(options))
  app.post('/hooks', webhook(options), async (c) => {
    handled++
    const delivery = c.get('webhook')
    const received: Received = {
      mode: delivery.mode,
      payload: delivery.payload,
      rawLength: delivery.rawBody.byteLength,
      // Read again through Hono: the middleware must have left the body readable.
      rawText: await c.req.text(),
    }
    return c.json(received)
  })
  // Hono's default answer, without the console noise for the cases where a resolver throws.
  app.onError((error, c) => (error instanceof HTTPException ? error.getResponse() : c.text('Internal Server Error', 500)))
  return { app, handled: () => handled }
}
