// Receives the service's signed webhooks on POST /webhooks. On Bun or Deno, `export default app`
// instead of calling serve(); on Workers, read the secret from the env binding.
// Run: WEBHOOK_SECRET=… pnpm --filter examples hono
import { serve } from '@hono/node-server'
import { webhook } from '@hookguard/hono'
import { Hono } from 'hono'

const secret = process.env.WEBHOOK_SECRET
if (!secret) throw new Error('Set WEBHOOK_SECRET to the signing secret from the service settings.')

const app = new Hono()

app.post('/webhooks', webhook({ auth: { mode: 'secret', secret } }), (c) => {
  console.log('verified delivery:', c.get('webhook').payload)
  return c.body(null, 204)
})

const port = Number(process.env.PORT ?? 3000)
serve({ fetch: app.fetch, port }, () => console.log(`listening on http://localhost:${port}/webhooks`))
