/**
 * The preambles that README fragments are compiled after (`<!-- snippet: context=NAME -->`): what
 * the text around a fragment says it assumes, written once. A context with a `postamble` makes
 * its fragments runnable servers (`deliver=`): the postamble listens on `PORT`.
 *
 * A preamble declares only what the fragment leaves out; a fragment that declares the same name
 * fails to compile, which is how a fragment that grew into a complete file is noticed.
 */
import type { SnippetEnv } from './snippets.ts'

export interface SnippetContext {
  env: SnippetEnv
  /** What the README's text tells the reader to have, as code. */
  description: string
  preamble: string
  /** Appended after the fragment: starts the server for `deliver=`. */
  postamble?: string
}

export const CONTEXTS: Record<string, SnippetContext> = {
  'express-app': {
    env: 'node',
    description: 'an Express app `app` and a `handler` that answers 204',
    preamble: `import { tokenEndpoint, webhook } from '@hookguard/express'
import express from 'express'

const app = express()
const handler: express.RequestHandler = (_req, res) => {
  res.sendStatus(204)
}
`,
    postamble: 'app.listen(Number(process.env.PORT))\n',
  },
  'koa-router': {
    env: 'node',
    description: 'a @koa/router `router` and a `handler` that answers 204',
    preamble: `import { tokenEndpoint, webhook } from '@hookguard/koa'
import Router from '@koa/router'
import Koa from 'koa'

const router = new Router()
const handler = (ctx: Koa.Context) => {
  ctx.status = 204
}
`,
    postamble: 'new Koa().use(router.routes()).listen(Number(process.env.PORT))\n',
  },
  'hono-app': {
    env: 'node',
    description: 'a Hono app `app` (on Node) and a `handler` that answers 204',
    preamble: `import { serve } from '@hono/node-server'
import { tokenEndpoint, webhook } from '@hookguard/hono'
import { type Context, Hono } from 'hono'

const app = new Hono()
const handler = (c: Context) => c.body(null, 204)
`,
    postamble: 'serve({ fetch: app.fetch, port: Number(process.env.PORT) })\n',
  },
  'fetch-route': {
    env: 'node',
    description: 'a route file of a Fetch platform (Next.js here) and a `handler` that answers 204; served on Node by @hono/node-server',
    preamble: `import { serve } from '@hono/node-server'
import { tokenEndpoint, webhook } from '@hookguard/fetch'

const handler = () => new Response(null, { status: 204 })
`,
    postamble: 'serve({ fetch: (request) => POST(request), port: Number(process.env.PORT) })\n',
  },
  'fastify-app': {
    env: 'node',
    description:
      'a Fastify app `app` whose logger, not-found handler and framework errors hide credentials, and a `handler` that answers 204',
    preamble: `import { frameworkErrors, logSerializers, notFoundHandler, requireWebhook, tokenEndpoint, webhook } from '@hookguard/fastify'
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'

const app = Fastify({ frameworkErrors, logger: { serializers: logSerializers } })
app.setNotFoundHandler(notFoundHandler)
const handler = async (_request: FastifyRequest, reply: FastifyReply) => reply.code(204).send()
`,
    postamble: 'app.listen({ port: Number(process.env.PORT) })\n',
  },
  'nextjs-route': {
    env: 'node',
    description:
      'a complete Next.js route file (`app/webhooks/route.ts`, its imports its own) exporting POST; served on Node by @hono/node-server, which calls POST as Next.js would, beside a token route (`app/webhooks/token/route.ts`) with the oauth2 options the text pairs it with',
    preamble: '',
    postamble: `import { serve } from '@hono/node-server'
import { tokenEndpoint as pairedTokenEndpoint } from '@hookguard/fetch'

const pairedToken = pairedTokenEndpoint({ auth: { mode: 'oauth2', appId: process.env.APP_ID!, secret: process.env.APP_SECRET! } })
serve({
  fetch: (request) => (new URL(request.url).pathname === '/webhooks/token' ? pairedToken(request) : POST(request)),
  port: Number(process.env.PORT),
})
`,
  },
  'nextjs-token-route': {
    env: 'node',
    description:
      'a complete Next.js token route file (`app/webhooks/token/route.ts`) exporting GET and POST; served on Node at /webhooks/token beside the webhook route the text pairs it with, with the same options',
    preamble: '',
    postamble: `import { serve } from '@hono/node-server'
import { webhook as pairedWebhook } from '@hookguard/fetch'

const pairedRoute = pairedWebhook(
  { auth: { mode: 'oauth2', appId: process.env.APP_ID!, secret: process.env.APP_SECRET! } },
  () => new Response(null, { status: 204 }),
)
serve({
  fetch: (request) => {
    if (new URL(request.url).pathname !== '/webhooks/token') return pairedRoute(request)
    return request.method === 'POST' ? POST(request) : GET(request)
  },
  port: Number(process.env.PORT),
})
`,
  },
  options: {
    env: 'node',
    description: "an adapter's `webhook` (Express here; the options are the same in every adapter) and the app's own lookups",
    preamble: `import { webhook } from '@hookguard/express'

declare const tenants: { secretFor(host: string): Promise<string | undefined> }
declare const senders: { check(username: string, password: string): Promise<boolean> }
`,
  },
  client: {
    env: 'node',
    description: "the app's settings for the API client",
    preamble: `import { createClient } from '@hookguard/client'

declare const baseUrl: string
declare const appId: string
declare const appSecret: string
`,
  },
}
