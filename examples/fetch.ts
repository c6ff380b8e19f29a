// Receives the service's signed webhooks on POST /webhooks with a plain fetch handler, the shape of
// a Next.js route handler, a Remix action, Bun.serve and Deno.serve; served on Node here by
// @hono/node-server, which serves any fetch handler.
// Run: WEBHOOK_SECRET=… pnpm --filter examples fetch-handler (not `fetch`: that name is pnpm's own command)
import { serve } from '@hono/node-server'
import { webhook } from '@hookguard/fetch'

const secret = process.env.WEBHOOK_SECRET
if (!secret) throw new Error('Set WEBHOOK_SECRET to the signing secret from the service settings.')

const receive = webhook({ auth: { mode: 'secret', secret } }, (delivery) => {
  console.log('verified delivery:', delivery.payload)
  return new Response(null, { status: 204 })
})

function fetch(request: Request): Promise<Response> | Response {
  const { pathname } = new URL(request.url)
  if (pathname === '/webhooks' && request.method === 'POST') return receive(request)
  return new Response('Not Found', { status: 404 })
}

const port = Number(process.env.PORT ?? 3000)
serve({ fetch, port }, () => console.log(`listening on http://localhost:${port}/webhooks`))
