import { type DedupeStore, memoryDedupeStore, sign, type WebhookOptions } from '@hookguard/core'
import { wrappingClaims } from '@hookguard/testkit/claims'
import { sendTo } from '@hookguard/testkit/http'
import { describe, expect, it } from 'vitest'
import { startServed } from '../robustness/support/listening.ts'
import { factories } from '../support/apps.ts'
import { deliveryRequest, send } from '../support/dedupe-schedule.ts'

// "Each delivery once" when the sender's connection drops: a service that times out and retries
// does this with no attacker. A disconnect says nothing about the handler, which runs on; its claim
// is settled by the app's answer, or expires with processingTtl, never by the disconnect alone.

const SECRET = 'whsec-disconnects-5c2e19'
const EVENT = '{"event":"order.paid","data":{"orderNo":"SO-7731","amount":12.5}}'
const HANDLER_MS = 400
const DROP_AFTER_MS = 100
const COPIES = 5
/** A claim is settled by the app's answer at once; this only bounds the wait for one that never is. */
const SETTLE_BOUND_MS = 5_000

const options = (store: DedupeStore): WebhookOptions => ({ auth: { mode: 'secret', secret: SECRET }, dedupe: { store, processingTtl: 60 } })
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Sends one copy of the delivery and drops the connection after `ms`, unless answered before. */
async function sendAndDrop(port: number, ms: number): Promise<void> {
  await send(port, EVENT, await sign(EVENT, SECRET), ms)
}

/**
 * Sends one copy of the delivery and drops the connection once `running` resolves (its handler has
 * started), so the sender leaves while the handler runs however slowly the server got there; it
 * never waits for an answer.
 */
async function sendAndDropWhile(port: number, running: Promise<void>): Promise<void> {
  const signature = await sign(EVENT, SECRET)
  const sent = deliveryRequest(port, signature)
  sent.on('error', () => {})
  sent.end(EVENT)
  await running
  sent.destroy()
}

/** A promise the handler resolves when its first run starts. */
function firstRun(): { started(): void; running: Promise<void> } {
  let started = () => {}
  const running = new Promise<void>((resolve) => {
    started = resolve
  })
  return { started, running }
}

/**
 * The in-memory store, telling when a claim it gave is settled: the retry is sent once the app's
 * answer has settled the claim, however long that took, rather than after a guess.
 */
function settlingStore(): { store: DedupeStore; settled(): Promise<'complete' | 'release' | 'unsettled'> } {
  const inner = memoryDedupeStore()
  let settle: (how: 'complete' | 'release') => void = () => {}
  const settled = new Promise<'complete' | 'release'>((resolve) => {
    settle = resolve
  })
  return {
    store: wrappingClaims(inner, (claim) => ({
      complete: (ttl) => claim.complete(ttl).then(() => settle('complete')),
      release: () => claim.release().then(() => settle('release')),
    })),
    // Bounded, so that a claim left unsettled fails with that, not with the test's timeout.
    settled: () => Promise.race([settled, new Promise<'unsettled'>((resolve) => setTimeout(resolve, SETTLE_BOUND_MS, 'unsettled'))]),
  }
}

const serverFactories = factories.filter((factory) => factory.inProcess !== true)

// Each adapter's cases wait on their handler's real time, side by side.
describe.concurrent.each(serverFactories)('$name, with dedupe', (factory) => {
  it('runs the handler once for copies whose senders drop the connection while it runs, and records it as handled', async ({
    onTestFinished,
  }) => {
    let active = 0
    let overlapped = false
    const { store, settled } = settlingStore()
    const { started, running } = firstRun()
    const app = await startServed(factory, options(store), {
      async work() {
        started()
        active++
        if (active > 1) overlapped = true
        await sleep(HANDLER_MS)
        active--
        return 200
      },
    })
    onTestFinished(() => app.close())
    if (app.port === undefined) throw new Error(`${factory.name} does not listen on a port`)
    // One copy after another: the first dropped while its handler runs, the others each after
    // 100 ms, while it runs or after it finished.
    await sendAndDropWhile(app.port, running)
    for (let copy = 1; copy < COPIES; copy++) await sendAndDrop(app.port, DROP_AFTER_MS)
    // The first handler's answer, written after its sender left, settles the claim as handled.
    expect(await settled()).toBe('complete')
    const retry = await sendTo(app.port, {
      path: '/hooks',
      headers: { 'content-type': 'application/json', 'x-service-hmac-signature': await sign(EVENT, SECRET) },
      body: EVENT,
    })
    expect({ handled: app.handled(), overlapped }).toEqual({ handled: 1, overlapped: false })
    expect(retry.status, retry.text).toBe(200)
    expect(JSON.parse(retry.text)).toMatchObject({ duplicate: true })
  }, 15_000)

  it('releases the claim when the handler fails after its sender dropped the connection, so the retry runs it', async ({
    onTestFinished,
  }) => {
    let runs = 0
    const { store, settled } = settlingStore()
    const { started, running } = firstRun()
    const app = await startServed(factory, options(store), {
      async work() {
        started()
        runs++
        await sleep(HANDLER_MS)
        return runs === 1 ? 500 : 200
      },
    })
    onTestFinished(() => app.close())
    if (app.port === undefined) throw new Error(`${factory.name} does not listen on a port`)
    await sendAndDropWhile(app.port, running)
    // The handler's 500, written after its sender left, releases the claim.
    expect(await settled()).toBe('release')
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
