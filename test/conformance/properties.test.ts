import { sign } from '@hookguard/core'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type App, factories, type Received } from '../support/apps.ts'

const SECRET = 'whsec-property-3b8e'

describe.each(factories)('$name', (factory) => {
  let app: App
  beforeAll(async () => {
    app = await factory.start({ auth: { mode: 'secret', secret: SECRET } })
  })
  afterAll(() => app.close())

  it('hands on any signed JSON body byte for byte, in any layout, with its parsed payload', async () => {
    const body = fc
      .tuple(fc.jsonValue({ stringUnit: 'grapheme', maxDepth: 4 }), fc.constantFrom(undefined, 2, '\t'))
      .map(([value, indent]) => JSON.stringify(value, null, indent))
    await fc.assert(
      fc.asyncProperty(body, async (text) => {
        const reply = await app.send({
          path: '/hooks',
          headers: { 'content-type': 'application/json; charset=utf-8', 'x-service-hmac-signature': await sign(text, SECRET) },
          body: text,
        })
        expect(reply.status, reply.text).toBe(200)
        const received = JSON.parse(reply.text) as Received
        expect(received.rawText).toBe(text)
        expect(received.rawLength).toBe(Buffer.byteLength(text))
        expect(received.payload).toEqual(JSON.parse(text))
      }),
      { numRuns: 40 },
    )
  })
})
