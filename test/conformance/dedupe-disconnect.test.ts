import { sign, type WebhookOptions } from '@hookguard/core'
import { sendTo } from '@hookguard/testkit/http'
import { afterEach, describe, expect, it } from 'vitest'
import { type Served, startServed } from '../robustness/support/listening.ts'
import { factories } from '../support/apps.ts'
import { send } from '../support/dedupe-schedule.ts'

// "Each delivery once" when the sender's connection drops: a service that times out and retries
// does this with no attacker. A disconnect says nothing about the handler, which runs on; its claim
// is settled by the app's answer, or expires with processingTtl, never by the disconnect alone.

const SECRET = 'whsec-disconnects-5c2e19'
const EVENT = '{"event":"order.paid","data":{"orderNo":"SO-7731","amount":12.5}}'
const HANDLER_MS = 400
const DROP_AFTER_MS = 100
const COPIES = 5

const options = (): WebhookOptions => ({ auth: { mode: 'secret', secret: SECRET }, dedupe: { processingTtl: 60 } })
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Sends one copy of the delivery and drops the connection after `ms`, unless answered before. */
async function sendAndDrop(port: number, ms: number): Promise<void> {
  await send(port, EVENT, await sign(EVENT, SECRET), ms)
}

const serverFactories = factories.filter((factory) => factory.inProcess !== true)

let running: Served | undefined
afterEach(async () => {
  await running?.close()
  running = undefined
})

describe.each(serverFactories)('$name, with dedupe', (factory) => {
  it('runs the handler once for copies whose senders drop the connection while it runs, and records it as handled', async () => {
    let active = 0
    let overlapped = false
    const app = await startServed(factory, options(), {
      async work() {
        active++
        if (active > 1) overlapped = true
        await sleep(HANDLER_MS)
        active--
        return 200
      },
    })
    running = app
    if (app.port === undefined) throw new Error(`${factory.name} does not listen on a port`)
    // One copy after another, each dropped after 100 ms: the first while its handler runs, the
    // others while it runs or after it finished.
    for (let copy = 0; copy < COPIES; copy++) await sendAndDrop(app.port, DROP_AFTER_MS)
    // The first handler's answer, written after its sender left, settles the claim as handled.
    await sleep(HANDLER_MS)
    const retry = await sendTo(app.port, {
      path: '/hooks',
      headers: { 'content-type': 'application/json', 'x-service-hmac-signature': await sign(EVENT, SECRET) },
      body: EVENT,
    })
    expect({ handled: app.handled(), overlapped }).toEqual({ handled: 1, overlapped: false })
    expect(retry.status, retry.text).toBe(200)
    expect(JSON.parse(retry.text)).toMatchObject({ duplicate: true })
  }, 15_000)

  it('releases the claim when the handler fails after its sender dropped the connection, so the retry runs it', async () => {
    let runs = 0
    const app = await startServed(factory, options(), {
      async work() {
        runs++
        await sleep(HANDLER_MS)
        return runs === 1 ? 500 : 200
      },
    })
    running = app
    if (app.port === undefined) throw new Error(`${factory.name} does not listen on a port`)
    await sendAndDrop(app.port, DROP_AFTER_MS)
    await sleep(HANDLER_MS + 100)
    const retry = await sendTo(app.port, {
      path: '/hooks',
      headers: { 'content-type': 'application/json', 'x-service-hmac-signature': await sign(EVENT, SECRET) },
      body: EVENT,
    })
    expect(retry.status, retry.text).toBe(200)
    expect(JSON.parse(retry.text)).not.toHaveProperty('duplicate')
    expect(app.handled()).toBe(2)
  }, 15_000)
})
