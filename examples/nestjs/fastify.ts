// NestJS on its Fastify platform: receives the service's signed webhooks on POST /webhooks.
// Run: WEBHOOK_SECRET=… pnpm --filter examples nestjs:fastify
import 'reflect-metadata'
import { fileURLToPath } from 'node:url'
import { type FastifyWebhookOptions, requireWebhook, tokenEndpoint, webhook } from '@hookguard/fastify'
import type { LogLevel } from '@nestjs/common'
import { NestFactory } from '@nestjs/core'
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify'
import type { FastifyInstance } from 'fastify'
import { AppModule, DeliveriesService } from './app.ts'

/** The app, not yet listening; `options` are the service's settings. */
export async function createApp(options: FastifyWebhookOptions, logger: LogLevel[] | false = ['log', 'warn', 'error']) {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), { logger })
  const deliveries = app.get(DeliveriesService)

  // Nest declares its controllers' routes on Fastify's root instance, where webhook() would take
  // every route's body. So the webhook route is declared in a plugin of its own, beside Nest's
  // routes: in it, webhook() reads the raw body itself with its own limit, and the handler hands
  // the verified delivery to Nest's providers. Nest's guards, pipes and interceptors do not run here.
  if (options.auth.mode === 'oauth2') await app.register(tokenEndpoint(options), { prefix: '/webhooks/token' })
  await app.register(async (hooks: FastifyInstance) => {
    await hooks.register(webhook(options))
    hooks.post('/webhooks', async (request, reply) => {
      deliveries.handle(requireWebhook(request))
      return reply.code(204).send()
    })
  })
  return app
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const secret = process.env.WEBHOOK_SECRET
  if (!secret) throw new Error('Set WEBHOOK_SECRET to the signing secret from the service settings.')
  const app = await createApp({ auth: { mode: 'secret', secret } })
  await app.listen(Number(process.env.PORT ?? 3000))
  console.log(`listening on ${await app.getUrl()}/webhooks`)
}
