import { createReceiver, type IncomingRequest, type StandardSchemaV1, sign, type WebhookOptions } from '@hookguard/core'
import { type } from 'arktype'
import * as v from 'valibot'
import { describe, expect, expectTypeOf, it } from 'vitest'
import * as z from 'zod'

const SECRET = 'whsec-schema-test'
const auth = { mode: 'secret', secret: SECRET } as const

async function delivery(payload: unknown): Promise<IncomingRequest> {
  const body = JSON.stringify(payload)
  return { method: 'POST', url: '/hooks', headers: { 'x-service-hmac-signature': await sign(body, SECRET) }, body }
}

async function answer<Payload>(options: WebhookOptions<Payload>, payload: unknown) {
  const result = await createReceiver(options).verify(await delivery(payload))
  if (result.ok) return { ok: true as const, payload: result.delivery.payload }
  return { ok: false as const, status: result.response.status, body: JSON.parse(result.response.body) as Record<string, unknown> }
}

const GOOD = { event: 'customer.created', customer: { id: 42, mobile: '13800000000' }, tags: ['vip'] }
const BAD = { event: 'customer.created', customer: { id: 'forty-two', mobile: 13800000000 }, tags: [7] }

// The same shape in three validators: every one implements Standard Schema, none is a dependency of the core.
const schemas = {
  Zod: z.object({ event: z.string(), customer: z.object({ id: z.number(), mobile: z.string() }), tags: z.array(z.string()) }),
  Valibot: v.object({ event: v.string(), customer: v.object({ id: v.number(), mobile: v.string() }), tags: v.array(v.string()) }),
  ArkType: type({ event: 'string', customer: { id: 'number', mobile: 'string' }, tags: 'string[]' }),
}

describe('the schema option', () => {
  describe.each(Object.entries(schemas))('with %s', (_, schema) => {
    it('hands on a payload that matches', async () => {
      expect(await answer({ auth, schema }, GOOD)).toEqual({ ok: true, payload: GOOD })
    })

    it('answers 422 invalid_payload naming every failing path and none of the values', async () => {
      const reply = await answer({ auth, schema }, BAD)
      expect(reply).toMatchObject({ ok: false, status: 422, body: { error: 'invalid_payload' } })
      if (reply.ok) return
      expect(new Set(reply.body.paths as string[])).toEqual(new Set(['customer.id', 'customer.mobile', 'tags[0]']))
      for (const value of ['forty-two', '13800000000', '7']) expect(JSON.stringify(reply.body)).not.toContain(value)
    })
  })

  it("hands on the schema's output, not the parsed JSON", async () => {
    const schema = z.object({ amount: z.string().transform(Number), at: z.iso.datetime().transform((text) => new Date(text)) })
    const reply = await answer({ auth, schema }, { amount: '12.50', at: '2026-06-01T12:00:00Z' })
    expect(reply).toEqual({ ok: true, payload: { amount: 12.5, at: new Date('2026-06-01T12:00:00Z') } })
  })

  it('awaits an asynchronous schema', async () => {
    const schema = z.object({ id: z.number() }).refine(async ({ id }) => id !== 13)
    expect(await answer({ auth, schema }, { id: 12 })).toMatchObject({ ok: true })
    expect(await answer({ auth, schema }, { id: 13 })).toMatchObject({ ok: false, status: 422, body: { paths: ['(root)'] } })
  })

  it('never validates a payload that failed authentication', async () => {
    let validated = 0
    const schema: StandardSchemaV1<unknown, unknown> = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: (value) => {
          validated++
          return { value }
        },
      },
    }
    const result = await createReceiver({ auth, schema }).verify({
      ...(await delivery(GOOD)),
      headers: { 'x-service-hmac-signature': '00' },
    })
    expect(result.ok).toBe(false)
    expect(validated).toBe(0)
  })

  it('reports at most ten paths, with long keys cut and odd keys quoted', async () => {
    const keys = Array.from({ length: 30 }, (_, i) => `k${i}`)
    const many = z.object(Object.fromEntries(keys.map((key) => [key, z.string()])))
    const reply = await answer({ auth, schema: many }, {})
    expect(reply.ok || reply.body.paths).toHaveLength(10)

    const long = 'x'.repeat(500)
    const odd = z.object({ [long]: z.string(), 'a b': z.string(), '': z.string() })
    const oddReply = await answer({ auth, schema: odd }, {})
    expect(oddReply.ok || oddReply.body.paths).toEqual([`["${'x'.repeat(64)}…"]`, '["a b"]', '[""]'])
  })

  it('refuses at setup anything that is not a Standard Schema', () => {
    for (const schema of [{}, z.string().parse, { '~standard': {} }, 'object']) {
      expect(() => createReceiver({ auth, schema } as unknown as WebhookOptions)).toThrow(
        new TypeError(
          '@hookguard/core: schema must be a Standard Schema (Zod, Valibot, ArkType…): an object with a ~standard.validate function',
        ),
      )
    }
  })

  it("types the delivery's payload with the schema's output", async () => {
    const receiver = createReceiver({ auth, schema: schemas.Zod })
    const result = await receiver.verify(await delivery(GOOD))
    if (result.ok)
      expectTypeOf(result.delivery.payload).toEqualTypeOf<{ event: string; customer: { id: number; mobile: string }; tags: string[] }>()
    const untyped = await createReceiver({ auth }).verify(await delivery(GOOD))
    if (untyped.ok) expectTypeOf(untyped.delivery.payload).toBeUnknown()
  })
})
