import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// `next dev` writes each request's URL, query included, into its terminal: the token address's
// app secret and the webhook address's access token with it. docs/frameworks/fetch.md gives the
// `logging.incomingRequests` option that leaves the webhook routes out; examples/nextjs uses the
// same. Checked here through Next.js's own filter, the function `next dev` asks before it logs.

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const require = createRequire(join(ROOT, 'examples', 'nextjs', 'next.config.mjs'))
const { ignoreLoggingIncomingRequests } = require('next/dist/server/dev/log-requests.js') as {
  ignoreLoggingIncomingRequests(request: { url: string }, logging: unknown): boolean
}
const configFile = new URL('../examples/nextjs/next.config.mjs', import.meta.url).href
const { default: config } = (await import(configFile)) as { default: { logging: unknown } }
const page = readFileSync(join(ROOT, 'docs', 'frameworks', 'fetch.md'), 'utf8')

const logged = (url: string) => !ignoreLoggingIncomingRequests({ url }, config.logging)

describe("next dev's request log, with the option docs/frameworks/fetch.md gives", () => {
  it('is the option examples/nextjs sets', () => {
    const option = /^\s*(logging: \{ incomingRequests: .*\}),?$/m.exec(readFileSync(join(ROOT, 'examples/nextjs/next.config.mjs'), 'utf8'))
    expect(option?.[1]).toBeDefined()
    expect(page).toContain(`  ${option?.[1]},\n`)
  })

  it('leaves out the token address with its app secret, and the webhook address with its token', () => {
    expect(logged('/webhooks/token?appid=app-1&secret=app-secret&grant_type=client_credentials')).toBe(false)
    expect(logged('/webhooks?access_token=tok')).toBe(false)
    expect(logged('/webhooks/token')).toBe(false)
    expect(logged('/webhooks')).toBe(false)
  })

  it("logs the app's other routes", () => {
    expect(logged('/')).toBe(true)
    expect(logged('/dashboard?tab=1')).toBe(true)
    expect(logged('/webhooks-status')).toBe(true)
  })

  it('would log the credentials without it', () => {
    expect(ignoreLoggingIncomingRequests({ url: '/webhooks?access_token=tok' }, undefined)).toBe(false)
  })
})
