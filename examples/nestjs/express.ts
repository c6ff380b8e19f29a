// NestJS on its Express platform: receives the service's signed webhooks on POST /webhooks, in a
// Nest controller. Run: WEBHOOK_SECRET=… pnpm --filter examples nestjs:express
import 'reflect-metadata'
import { fileURLToPath } from 'node:url'
import { type ExpressWebhookOptions, tokenEndpoint, webhook } from '@hookguard/express'
import { Controller, HttpCode, Inject, type LogLevel, Module, Post, Req } from '@nestjs/common'
import { NestFactory } from '@nestjs/core'
import type { NestExpressApplication } from '@nestjs/platform-express'
import type { Request } from 'express'
import { AppModule, DeliveriesService } from './app.ts'

/** The webhook handler: Nest runs it only after webhook() has verified the request. */
export class WebhooksController {
  constructor(private readonly deliveries: DeliveriesService) {}

  receive(req: Request): void {
    // Set by webhook(), which called next() only for a verified delivery. req.body is its payload.
    if (req.webhook) this.deliveries.handle(req.webhook)
  }
}

class WebhooksModule {}

// Nest's decorators, applied as calls (see app.ts). With `experimentalDecorators`:
//   @Controller('webhooks') on the class, @Inject(DeliveriesService) on the constructor's
//   parameter, @Post() and @HttpCode(204) on receive(), @Req() on its parameter.
Controller('webhooks')(WebhooksController)
Inject(DeliveriesService)(WebhooksController, undefined, 0)
Reflect.decorate(
  [Post(), HttpCode(204)],
  WebhooksController.prototype,
  'receive',
  Object.getOwnPropertyDescriptor(WebhooksController.prototype, 'receive'),
)
Req()(WebhooksController.prototype, 'receive', 0)
Module({ imports: [AppModule], controllers: [WebhooksController] })(WebhooksModule)

/** The app, not yet listening; `options` are the service's settings. */
export async function createApp(options: ExpressWebhookOptions, logger: LogLevel[] | false = ['log', 'warn', 'error']) {
  const app = await NestFactory.create<NestExpressApplication>(WebhooksModule, { logger })
  // app.use() in main.ts runs before Nest's body parsers, which Nest adds when the app starts, and
  // before its middleware and guards: webhook() reads the raw body itself, with its own 1 MiB limit
  // (maxBodySize), then hands the request on to the controller. Every other route keeps Nest's
  // JSON parser and its 100 kB limit. The path is a prefix and takes no global prefix: write it whole.
  if (options.auth.mode === 'oauth2') app.use('/webhooks/token', tokenEndpoint(options))
  app.use('/webhooks', webhook(options))
  return app
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const secret = process.env.WEBHOOK_SECRET
  if (!secret) throw new Error('Set WEBHOOK_SECRET to the signing secret from the service settings.')
  const app = await createApp({ auth: { mode: 'secret', secret } })
  await app.listen(Number(process.env.PORT ?? 3000))
  console.log(`listening on ${await app.getUrl()}/webhooks`)
}
