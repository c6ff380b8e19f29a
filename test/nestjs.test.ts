import 'reflect-metadata'
import type { WebhookOptions } from '@hookguard/core'
import { deliver } from '@hookguard/emulator'
import { webhook } from '@hookguard/express'
import { webhook as fastifyWebhook } from '@hookguard/fastify'
import { Controller, type INestApplication, type MiddlewareConsumer, Module, Post, Req } from '@nestjs/common'
import { NestFactory } from '@nestjs/core'
import type { NestExpressApplication } from '@nestjs/platform-express'
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify'
import type { Request } from 'express'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DeliveriesService } from '../examples/nestjs/app.ts'
import { createApp as createExpressApp } from '../examples/nestjs/express.ts'
import { createApp as createFastifyApp } from '../examples/nestjs/fastify.ts'

// The NestJS recipe of the README, as examples/nestjs runs it on each of Nest's platforms, with
// the service's deliveries made by the emulator.

const SECRET = 'nest-signing-secret'
const MIB = 1_048_576
const BASIC = { mode: 'basic', username: 'hook-user', password: 'hook-password' } as const
const OAUTH = { mode: 'oauth2', appId: 'nest-app', secret: 'a-long-enough-app-secret-for-nest' } as const

/** A JSON delivery of exactly `bytes` bytes, with no whitespace (so every canonical form is itself). */
function payloadOf(bytes: number): string {
  const frame = '{"data":""}'
  return `{"data":"${'x'.repeat(bytes - frame.length)}"}`
}

const PLATFORMS: { name: string; createApp: (options: WebhookOptions, logger: false) => Promise<INestApplication> }[] = [
  { name: 'Express', createApp: createExpressApp },
  { name: 'Fastify', createApp: createFastifyApp },
]

/** Starts the example app on 127.0.0.1, on a port the system picks. */
function serve(createApp: (typeof PLATFORMS)[number]['createApp'], options: WebhookOptions) {
  const started = { app: undefined as unknown as INestApplication, url: '', deliveries: undefined as unknown as DeliveriesService }
  beforeAll(async () => {
    started.app = await createApp(options, false)
    await started.app.listen(0, '127.0.0.1')
    started.url = await started.app.getUrl()
    started.deliveries = started.app.get(DeliveriesService)
  })
  afterAll(() => started.app.close())
  return started
}

for (const { name, createApp } of PLATFORMS) {
  describe(`NestJS on its ${name} platform`, () => {
    describe('with a signing secret', () => {
      const server = serve(createApp, { auth: { mode: 'secret', secret: SECRET } })

      it("hands a genuine delivery to the app's provider", async () => {
        const before = server.deliveries.received.length
        const answer = await deliver({
          url: `${server.url}/webhooks`,
          mode: 'secret',
          secret: SECRET,
          payload: { event: 'order.paid', id: 7 },
        })
        expect(answer.status).toBe(204)
        expect(server.deliveries.received.slice(before)).toMatchObject([{ mode: 'secret', payload: { event: 'order.paid', id: 7 } }])
      })

      it("answers a forged delivery 401 with hookguard's JSON body, and runs no handler", async () => {
        const before = server.deliveries.received.length
        const answer = await deliver({ url: `${server.url}/webhooks`, mode: 'secret', secret: 'not-the-secret', payload: { id: 7 } })
        expect(answer.status).toBe(401)
        expect(answer.headers['cache-control']).toBe('no-store')
        expect(JSON.parse(answer.body)).toEqual({ error: 'invalid_signature', message: expect.any(String) })
        expect(server.deliveries.received.length).toBe(before)
      })

      it("accepts a 1 MiB delivery, past Nest's own body limit", async () => {
        const answer = await deliver({ url: `${server.url}/webhooks`, mode: 'secret', secret: SECRET, payload: payloadOf(MIB) })
        expect(answer.status).toBe(204)
        expect(server.deliveries.received.at(-1)?.rawBody.byteLength).toBe(MIB)
      })

      it("refuses a delivery over 1 MiB with hookguard's 413", async () => {
        const answer = await deliver({ url: `${server.url}/webhooks`, mode: 'secret', secret: SECRET, payload: payloadOf(MIB + 1) })
        expect(answer.status).toBe(413)
        expect(JSON.parse(answer.body)).toMatchObject({ error: 'payload_too_large' })
      })

      it("leaves the app's other JSON routes to Nest's body parser", async () => {
        const answer = await fetch(`${server.url}/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ sku: 'A-1', quantity: 2 }),
        })
        expect(answer.status).toBe(201)
        expect(await answer.json()).toEqual({ created: { sku: 'A-1', quantity: 2 } })
      })
    })

    describe('with HTTP Basic', () => {
      const server = serve(createApp, { auth: BASIC })

      it('accepts the right credentials', async () => {
        const answer = await deliver({
          url: `${server.url}/webhooks`,
          mode: 'basic',
          username: BASIC.username,
          password: BASIC.password,
          payload: { id: 1 },
        })
        expect(answer.status).toBe(204)
      })

      it("answers wrong ones 401 with hookguard's challenge, not Nest's 403", async () => {
        const answer = await deliver({
          url: `${server.url}/webhooks`,
          mode: 'basic',
          username: BASIC.username,
          password: 'wrong',
          payload: { id: 1 },
        })
        expect(answer.status).toBe(401)
        expect(answer.headers['www-authenticate']).toBe('Basic realm="webhook", charset="UTF-8"')
        expect(JSON.parse(answer.body)).toMatchObject({ error: 'invalid_credentials' })
      })
    })

    describe('with OAuth 2.0', () => {
      const server = serve(createApp, { auth: OAUTH })

      it('issues a token at /webhooks/token and accepts a delivery that carries it', async () => {
        const answer = await deliver({
          url: `${server.url}/webhooks`,
          mode: 'oauth2',
          tokenUrl: `${server.url}/webhooks/token`,
          appId: OAUTH.appId,
          appSecret: OAUTH.secret,
          payload: { id: 2 },
        })
        expect(answer.status).toBe(204)
        expect(server.deliveries.received.at(-1)).toMatchObject({ mode: 'oauth2', payload: { id: 2 } })
      })

      it('answers a delivery without a token 401 with a Bearer challenge', async () => {
        const answer = await deliver({ url: `${server.url}/webhooks`, mode: 'none', payload: { id: 2 } })
        expect(answer.status).toBe(401)
        expect(answer.headers['www-authenticate']).toBe('Bearer')
        expect(JSON.parse(answer.body)).toMatchObject({ error: 'missing_token' })
      })
    })
  })
}

// What the README warns about: webhook() as Nest middleware (MiddlewareConsumer) runs after Nest's
// JSON parser. It then needs `rawBody: true`, and Nest's 100 kB limit answers a large delivery first.
describe('NestJS on its Express platform, with webhook() as Nest middleware', () => {
  class Hooks {
    receive(req: Request): { bytes: number | undefined } {
      return { bytes: req.webhook?.rawBody.byteLength }
    }
  }
  class HooksModule {
    configure(consumer: MiddlewareConsumer): void {
      consumer.apply(webhook({ auth: { mode: 'secret', secret: SECRET } })).forRoutes('webhooks')
    }
  }
  Controller('webhooks')(Hooks)
  Reflect.decorate([Post()], Hooks.prototype, 'receive', Object.getOwnPropertyDescriptor(Hooks.prototype, 'receive'))
  Req()(Hooks.prototype, 'receive', 0)
  Module({ controllers: [Hooks] })(HooksModule)

  async function start(rawBody: boolean, limit?: string): Promise<{ app: INestApplication; url: string }> {
    const app = await NestFactory.create<NestExpressApplication>(HooksModule, { logger: false, rawBody })
    if (limit) app.useBodyParser('json', { limit })
    await app.listen(0, '127.0.0.1')
    return { app, url: `${await app.getUrl()}/webhooks` }
  }

  it("without rawBody, answers 500 raw_body_unavailable: Nest's parser read the body first", async () => {
    const { app, url } = await start(false)
    try {
      const answer = await deliver({ url, mode: 'secret', secret: SECRET, payload: { id: 3 } })
      expect(answer.status).toBe(500)
      expect(JSON.parse(answer.body)).toMatchObject({ error: 'raw_body_unavailable' })
    } finally {
      await app.close()
    }
  })

  it("with rawBody, verifies req.rawBody, but Nest's 100 kB limit refuses a 1 MiB delivery", async () => {
    const { app, url } = await start(true)
    try {
      const small = await deliver({ url, mode: 'secret', secret: SECRET, payload: { id: 3 } })
      expect(small.status).toBe(201)
      const large = await deliver({ url, mode: 'secret', secret: SECRET, payload: payloadOf(MIB) })
      expect(large.status).toBe(413)
      // Nest's exception body, not hookguard's: the parser answered before webhook() ran.
      expect(JSON.parse(large.body)).not.toHaveProperty('error', 'payload_too_large')
    } finally {
      await app.close()
    }
  })

  it("with rawBody and Nest's JSON limit raised to 1mb, accepts a 1 MiB delivery", async () => {
    const { app, url } = await start(true, '1mb')
    try {
      const answer = await deliver({ url, mode: 'secret', secret: SECRET, payload: payloadOf(MIB) })
      expect(answer.status).toBe(201)
      expect(JSON.parse(answer.body)).toEqual({ bytes: MIB })
    } finally {
      await app.close()
    }
  })
})

// The other warning: Nest declares its controllers' routes on Fastify's root instance, so
// webhook() registered in a plugin scope never sees them.
describe('NestJS on its Fastify platform, with webhook() in a plugin scope and a Nest controller', () => {
  it('does not verify the controller: a forged delivery reaches its handler', async () => {
    class Hooks {
      receive(): { ran: true } {
        return { ran: true }
      }
    }
    class HooksModule {}
    Controller('webhooks')(Hooks)
    Reflect.decorate([Post()], Hooks.prototype, 'receive', Object.getOwnPropertyDescriptor(Hooks.prototype, 'receive'))
    Module({ controllers: [Hooks] })(HooksModule)

    const app = await NestFactory.create<NestFastifyApplication>(HooksModule, new FastifyAdapter(), { logger: false })
    try {
      await app.register(async (hooks: FastifyInstance) => {
        await hooks.register(fastifyWebhook({ auth: { mode: 'secret', secret: SECRET } }))
      })
      await app.listen(0, '127.0.0.1')
      const answer = await deliver({ url: `${await app.getUrl()}/webhooks`, mode: 'secret', secret: 'not-the-secret', payload: { id: 4 } })
      expect(answer.status).toBe(201)
      expect(JSON.parse(answer.body)).toEqual({ ran: true })
    } finally {
      await app.close()
    }
  })
})
