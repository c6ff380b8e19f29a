// Receives the service's deliveries in mode oauth2: its token address on /webhooks/token, its
// webhook address on /webhooks. docs/frameworks/fastify.md shows this file, with sample values
// to run it locally:
// APP_ID=app-local-test APP_SECRET=local-app-secret-for-tests-only pnpm --filter examples fastify:oauth2
import { frameworkErrors, logSerializers, notFoundHandler, requireWebhook, tokenEndpoint, webhook } from '@hookguard/fastify'
import Fastify from 'fastify'

// The request log and the 404 write URLs without the app secret and the access token, which
// travel in the query.
const app = Fastify({ frameworkErrors, logger: { serializers: logSerializers } })
app.setNotFoundHandler(notFoundHandler)

// The app id and secret of the service's settings; the same options serve both addresses.
const appId = process.env.APP_ID
const secret = process.env.APP_SECRET
if (!appId || !secret) throw new Error('Set APP_ID and APP_SECRET to the app id and secret of the service settings.')
const oauth = { auth: { mode: 'oauth2', appId, secret } } as const

// The service's "token URL": it GETs a token there (OAuth client libraries POST a form).
app.register(tokenEndpoint(oauth), { prefix: '/webhooks/token' })
// The service's "webhook URL": each delivery carries the token in ?access_token=….
app.register(async (hooks) => {
  await hooks.register(webhook(oauth))
  hooks.post('/webhooks', async (request, reply) => {
    request.log.info({ payload: requireWebhook(request).payload }, 'verified delivery')
    return reply.code(204).send()
  })
})

await app.listen({ port: Number(process.env.PORT ?? 3000) })
