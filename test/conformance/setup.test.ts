import type { WebhookOptions } from '@hookguard/core'
import * as forExpress from '@hookguard/express'
import * as forFetch from '@hookguard/fetch'
import * as forHono from '@hookguard/hono'
import * as forKoa from '@hookguard/koa'
import { describe, expect, it } from 'vitest'
import { factories } from '../support/apps.ts'

// Settings that would open a receiver to anyone are refused when the app starts, on every adapter:
// an environment variable that is set but empty must not become a password nobody has to know.
const unusable: [string, WebhookOptions][] = [
  ['an empty Basic password', { auth: { mode: 'basic', username: 'hook-user', password: '' } }],
  ['an empty signing secret', { auth: { mode: 'secret', secret: '' } }],
  ['an empty OAuth app secret', { auth: { mode: 'oauth2', appId: 'wx-app-1042', secret: '' } }],
  ['a control character in the Basic password', { auth: { mode: 'basic', username: 'hook-user', password: 'pw\r\n' } }],
]

describe.each(factories)('$name', (factory) => {
  describe('when set up with credentials nobody would have to know', () => {
    for (const [label, options] of unusable) {
      it(`refuses ${label} with a TypeError naming ${factory.packageName}, the package the app called`, async () => {
        await expect(factory.start(options)).rejects.toThrow(TypeError)
        await expect(factory.start(options)).rejects.toThrow(new RegExp(`^${factory.packageName}: `))
      })
    }
  })
})

describe.each([
  { packageName: '@hookguard/express', adapter: forExpress },
  { packageName: '@hookguard/koa', adapter: forKoa },
  { packageName: '@hookguard/hono', adapter: forHono },
  { packageName: '@hookguard/fetch', adapter: forFetch },
])('$packageName', ({ packageName, adapter }) => {
  it('refuses a token address in a mode other than oauth2, naming itself', () => {
    expect(() => adapter.tokenEndpoint({ auth: { mode: 'secret', secret: 'whsec-demo-7c2e91' } })).toThrow(
      new RegExp(`^${packageName}: a token endpoint needs auth.mode 'oauth2'`),
    )
  })
})
