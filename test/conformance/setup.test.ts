import type { WebhookOptions } from '@hookguard/core'
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
      it(`refuses ${label} with a TypeError naming the package`, async () => {
        await expect(factory.start(options)).rejects.toThrow(TypeError)
        await expect(factory.start(options)).rejects.toThrow(/^@hookguard\//)
      })
    }
  })
})
