import { sign, type WebhookErrorCode } from '@hookguard/core'
import { serialize } from '@hookguard/emulator'
import type { Reply } from '@hookguard/testkit/http'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type App, factories, type Received } from '../support/apps.ts'

// Properties of the whole verify path, per adapter: whatever the service sends verifies and
// arrives byte for byte; any change to what it signed or to the credential it presents is refused
// with the contract's code.

const RUNS = { numRuns: 30 }
const SIGNATURE = 'x-service-hmac-signature'
const SECRET = 'whsec-property-canary-6a1d'
const BASIC = { username: 'prop-üser', password: 'pa:ss-wörd canary' }
const OAUTH = { mode: 'oauth2', appId: 'wx-app-prop', secret: 'oauth-prop-canary-5e2b' } as const
const NOW = Date.UTC(2026, 5, 1, 12, 0)

/** What Java's `\s` matches, and so what the service's canonical form removes. */
const JAVA_WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d])

/** An edit of a string, by code point: every one leaves a string that differs from the original. */
type Edit =
  | { kind: 'replace'; at: number; text: string }
  | { kind: 'delete'; at: number }
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'truncate'; at: number }

function edits(character: fc.Arbitrary<string>): fc.Arbitrary<Edit> {
  const at = fc.nat()
  return fc.oneof(
    fc.record({ kind: fc.constant('replace' as const), at, text: character }),
    fc.record({ kind: fc.constant('delete' as const), at }),
    fc.record({ kind: fc.constant('insert' as const), at, text: character }),
    fc.record({ kind: fc.constant('truncate' as const), at }),
  )
}

/**
 * Applies `edit` to `original`; `undefined` when it would leave the string as it was in the sense
 * that matters (`same` says which replacements are no change, such as a hex digit's case).
 * `interior` keeps insertions away from the ends.
 */
function apply(original: string, edit: Edit, { same = (a: string, b: string) => a === b, interior = false } = {}): string | undefined {
  const points = [...original]
  const n = points.length
  switch (edit.kind) {
    case 'replace': {
      const i = edit.at % n
      if (same(points[i] as string, edit.text)) return undefined
      points[i] = edit.text
      return points.join('')
    }
    case 'delete':
      points.splice(edit.at % n, 1)
      return points.join('')
    case 'insert':
      points.splice(interior ? 1 + (edit.at % (n - 1)) : edit.at % (n + 1), 0, edit.text)
      return points.join('')
    case 'truncate':
      return points.slice(0, edit.at % n).join('')
  }
}

const printable = fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code))
const anyCharacter = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 })
/** What a token is made of, and what a forger would try in it. */
const tokenCharacter = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/%~'.split(''))

function refusal(reply: Reply): { status: number; error: unknown } {
  return { status: reply.status, error: reply.status === 200 ? undefined : (JSON.parse(reply.text) as { error: unknown }).error }
}

const refused = (error: WebhookErrorCode) => ({ status: 401, error })

describe.each(factories)('$name', (factory) => {
  describe("mode 'secret'", () => {
    let app: App
    beforeAll(async () => {
      app = await factory.start({ auth: { mode: 'secret', secret: SECRET }, maxBodySize: 4 * 1024 * 1024 })
    })
    afterAll(() => app.close())

    const payload = fc.jsonValue({ maxDepth: 4, stringUnit: 'grapheme' })
    const deliver = async (body: string | Uint8Array, signature: string) =>
      app.send({ path: '/hooks', headers: { 'content-type': 'application/json; charset=utf-8', [SIGNATURE]: signature }, body })

    // The service's own compact serialisation, and the indented layouts other senders produce.
    const layout = fc.constantFrom<(value: unknown) => string>(
      serialize,
      (value) => JSON.stringify(value, null, 2),
      (value) => JSON.stringify(value, null, '\t'),
    )

    it('delivers any signed JSON value, in any layout, byte for byte, with its parsed payload', async () => {
      await fc.assert(
        fc.asyncProperty(payload, layout, async (value, lay) => {
          const text = lay(value)
          const reply = await deliver(text, await sign(text, SECRET))
          expect(reply.status, reply.text).toBe(200)
          const received = JSON.parse(reply.text) as Received
          expect(received.rawText).toBe(text)
          expect(received.rawLength).toBe(Buffer.byteLength(text))
          expect(received.payload).toEqual(JSON.parse(text))
        }),
        RUNS,
      )
    })

    it('answers 401 invalid_signature when any byte of the body that is not whitespace changes, to any other byte', async () => {
      await fc.assert(
        fc.asyncProperty(payload, fc.nat(), fc.integer({ min: 1, max: 255 }), async (value, at, delta) => {
          const text = serialize(value)
          const signature = await sign(text, SECRET)
          const bytes = Buffer.from(text, 'utf8')
          const positions = [...bytes.keys()].filter((i) => !JAVA_WHITESPACE.has(bytes[i] as number))
          const i = positions[at % positions.length] as number
          bytes[i] = ((bytes[i] as number) + delta) % 256
          expect(refusal(await deliver(bytes, signature))).toEqual(refused('invalid_signature'))
        }),
        RUNS,
      )
    })

    it('answers 401 invalid_signature when the signature is edited anywhere, and 401 missing_signature when nothing is left', async () => {
      const body = serialize({ event: 'customer.created', note: 'body-canary', id: 884211 })
      const signature = await sign(body, SECRET)
      // A hex digit in the other case is the same digit (the header is compared case-insensitively).
      const sameDigit = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()
      // Commas and spaces at either end only separate the one signature from nothing.
      const edited = fc
        .oneof(edits(printable), edits(fc.constant('\t')))
        .map((edit) => apply(signature, edit, { same: sameDigit, interior: true }))
      await fc.assert(
        fc.asyncProperty(
          edited.filter((s) => s !== undefined),
          async (header) => {
            const expected = header.trim() === '' ? refused('missing_signature') : refused('invalid_signature')
            expect(refusal(await deliver(body, header))).toEqual(expected)
          },
        ),
        RUNS,
      )
    })
  })

  describe("mode 'basic'", () => {
    let app: App
    beforeAll(async () => {
      app = await factory.start({ auth: { mode: 'basic', ...BASIC } })
    })
    afterAll(() => app.close())

    const deliver = (username: string, password: string) =>
      app.send({
        path: '/hooks',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
        },
        body: '{"event":"ping"}',
      })

    it('delivers with the configured credentials', async () => {
      expect((await deliver(BASIC.username, BASIC.password)).status).toBe(200)
    })

    it('answers 401 invalid_credentials when the username or the password is edited at any position, even to nothing', async () => {
      const edited = fc.record({ field: fc.constantFrom('username' as const, 'password' as const), edit: edits(anyCharacter) })
      await fc.assert(
        fc.asyncProperty(
          edited.filter(({ field, edit }) => apply(BASIC[field], edit) !== undefined),
          async ({ field, edit }) => {
            const credentials = { ...BASIC, [field]: apply(BASIC[field], edit) as string }
            expect(refusal(await deliver(credentials.username, credentials.password))).toEqual(refused('invalid_credentials'))
          },
        ),
        RUNS,
      )
    })
  })

  describe("mode 'oauth2'", () => {
    let app: App
    let token: string
    beforeAll(async () => {
      app = await factory.start({ auth: OAUTH, clock: () => NOW })
      const query = new URLSearchParams({ appid: OAUTH.appId, secret: OAUTH.secret, grant_type: 'client_credentials' })
      token = (JSON.parse((await app.send({ method: 'GET', path: `/token?${query}` })).text) as { access_token: string }).access_token
    })
    afterAll(() => app.close())

    const deliver = (value: string, where: 'query' | 'bearer') =>
      app.send(
        where === 'query'
          ? { path: `/hooks?access_token=${encodeURIComponent(value)}`, headers: { 'content-type': 'application/json' }, body: '{}' }
          : { path: '/hooks', headers: { 'content-type': 'application/json', authorization: `Bearer ${value}` }, body: '{}' },
      )

    it('delivers with the token it issued, in the query and as a Bearer token', async () => {
      expect((await deliver(token, 'query')).status).toBe(200)
      expect((await deliver(token, 'bearer')).status).toBe(200)
    })

    it('answers 401 invalid_token when any character of the token is edited, and 401 missing_token when nothing is left', async () => {
      await fc.assert(
        fc.asyncProperty(
          edits(tokenCharacter).filter((edit) => apply(token, edit) !== undefined),
          fc.constantFrom('query' as const, 'bearer' as const),
          async (edit, where) => {
            const edited = apply(token, edit) as string
            const expected = edited === '' ? refused('missing_token') : refused('invalid_token')
            expect(refusal(await deliver(edited, where))).toEqual(expected)
          },
        ),
        RUNS,
      )
    })

    it('answers 401 invalid_token for the token with its last character respelled in any of the other 63 ways', async () => {
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
      for (const character of alphabet.replace(token.at(-1) as string, '')) {
        const reply = await deliver(`${token.slice(0, -1)}${character}`, 'query')
        expect(refusal(reply), `last character ${character}`).toEqual(refused('invalid_token'))
      }
    })
  })
})
