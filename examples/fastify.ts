// Receives the service's signed webhooks on POST /webhooks.
// Run: WEBHOOK_SECRET=… pnpm --filter examples fastify
import { frameworkErrors, logSerializers, notFoundHandler, requireWebhook, webhook } from '@hookguard/fastify'
import Fastify from 'fastify'

const secret = process.env.WEBHOOK_SECRET
if (!secret) throw new Error('Set WEBHOOK_SECRET to the signing secret from the service settings.')

// The request log writes URLs without credentials (an OAuth token travels in the query), and
// frameworkErrors answers a URL that is no valid percent-encoding without quoting it.
const app = Fastify({ frameworkErrors, logger: { serializers: logSerializers } })
// Fastify's own 404 writes and answers the URL as received, query and all.
app.setNotFoundHandler(notFoundHandler)

// webhook() applies to the plugin that registers it: here, the webhook routes only.
app.register(async (hooks) => {
  await hooks.register(webhook({ auth: { mode: 'secret', secret } }))
  hooks.post('/webhooks', async (request, reply) => {
    request.log.info({ payload: requireWebhook(request).payload }, 'verified delivery')
    return reply.code(204).send()
  })
})

app.listen({ port: Number(process.env.PORT ?? 3000) })
