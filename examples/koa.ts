// Receives the service's signed webhooks (on any path; with @koa/router, mount it on one route:
// router.post('/hooks', webhook(options), handler)).
// Run: WEBHOOK_SECRET=… pnpm --filter examples koa
import { webhook } from '@hookguard/koa'
import Koa from 'koa'

const secret = process.env.WEBHOOK_SECRET
if (!secret) throw new Error('Set WEBHOOK_SECRET to the signing secret from the service settings.')

const app = new Koa()

app.use(webhook({ auth: { mode: 'secret', secret } }))
app.use((ctx) => {
  console.log('verified delivery:', ctx.state.webhook?.payload)
  ctx.status = 204
})

const port = Number(process.env.PORT ?? 3000)
app.listen(port, () => console.log(`listening on http://localhost:${port}/`))
