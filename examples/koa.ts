// Receives the service's signed webhooks on POST /webhooks.
// Run: WEBHOOK_SECRET=… pnpm --filter examples koa
import { webhook } from '@hookguard/koa'
import Router from '@koa/router'
import Koa from 'koa'

const secret = process.env.WEBHOOK_SECRET
if (!secret) throw new Error('Set WEBHOOK_SECRET to the signing secret from the service settings.')

const router = new Router()

router.post('/webhooks', webhook({ auth: { mode: 'secret', secret } }), (ctx) => {
  console.log('verified delivery:', ctx.state.webhook?.payload)
  ctx.status = 204
})

const app = new Koa()
app.use(router.routes()).use(router.allowedMethods())

const port = Number(process.env.PORT ?? 3000)
app.listen(port, () => console.log(`listening on http://localhost:${port}/webhooks`))
