import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CASES } from '../examples/demo/cases.ts'
import { type Receiver, startReceivers } from '../examples/demo/receivers.ts'

// The demo's own receivers and deliveries: the emulator, delivering exactly as the service does,
// against every adapter in every mode.
let receivers: Receiver[] = []
beforeAll(async () => {
  receivers = await startReceivers()
})
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()))
})

for (const framework of ['Express', 'Koa', 'Hono', 'Fastify', 'Fetch handler']) {
  describe(`the emulator delivering to ${framework}`, () => {
    for (const c of CASES) {
      it(`answers ${c.expect.status}${c.expect.error ? ` ${c.expect.error}` : ''} in mode ${c.mode}: ${c.name}`, async () => {
        const receiver = receivers.find((r) => r.framework === framework) as Receiver
        expect(await c.run(receiver.url)).toEqual({ status: c.expect.status, error: c.expect.error })
      })
    }
  })
}
