import { sign } from '@hookguard/core'
import { afterEach, describe, expect, it } from 'vitest'
import { StreamQueue } from '../src/stream-queue.ts'
import type { StreamData } from '../src/ui-context.ts'
import { cleanup, inspector, SECRET, send } from './helpers.ts'

afterEach(cleanup)

const BODY = '{"event": "order.paid", "data": {"id": 42}}'

type Event = { [K in keyof StreamData]: { type: K; data: StreamData[K] } }[keyof StreamData]

/** The page's stream, read as the page reads it: events parsed as they arrive, the records listed applied from them. */
async function openStream(uiUrl: string, token: string) {
  const controller = new AbortController()
  const response = await fetch(`${new URL(uiUrl).origin}/api/events`, { headers: { 'x-inspect-token': token }, signal: controller.signal })
  expect(response.status).toBe(200)
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  const events: Event[] = []
  const listed = new Set<number>()
  let buffer = ''
  const pump = (async () => {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      buffer += decoder.decode(value, { stream: true })
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const type = /^event: (.*)$/m.exec(block)?.[1]
        const data = /^data: (.*)$/m.exec(block)?.[1]
        if (type === undefined || data === undefined) continue
        const event = { type, data: JSON.parse(data) } as Event
        events.push(event)
        if (event.type === 'ready') {
          listed.clear()
          for (const r of event.data.records) listed.add(r.id)
        } else if (event.type === 'record') listed.add(event.data.id)
        else if (event.type === 'deleted') for (const id of event.data.ids) listed.delete(id)
        else listed.clear()
      }
    }
  })().catch(() => undefined)
  return {
    events,
    listed,
    /** Waits (at most 5 s) until `done` holds. */
    async until(done: () => boolean): Promise<void> {
      const deadline = Date.now() + 5000
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`the stream did not get there: ${JSON.stringify(events.map((e) => e.type))}`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    },
    async close() {
      controller.abort()
      await pump
    },
  }
}

async function deliverSigned(receiveUrl: string, count: number): Promise<void> {
  const headers = { 'x-service-hmac-signature': await sign(BODY, SECRET) }
  for (let i = 0; i < count; i++) expect((await send(`${receiveUrl}/hooks`, { headers, chunks: [BODY] })).status).toBe(200)
}

describe('the page’s event stream', () => {
  it('starts with every record kept, then tells each record kept and each one the ring evicted', async () => {
    const { inspector: running } = await inspector({ maxRecords: 3 })
    await deliverSigned(running.receiveUrl, 2)
    const stream = await openStream(running.uiUrl, running.accessToken)
    await stream.until(() => stream.events.length > 0)
    expect(stream.events[0]).toMatchObject({ type: 'ready', data: { records: [{ id: 1 }, { id: 2 }] } })

    await deliverSigned(running.receiveUrl, 4)
    const kept = () => running.records().map((r) => r.id)
    await stream.until(() => stream.listed.size === 3 && [...stream.listed].every((id) => kept().includes(id)))
    expect(kept()).toEqual([4, 5, 6])
    expect([...stream.listed].sort((a, b) => a - b)).toEqual([4, 5, 6])
    expect(stream.events.filter((e) => e.type === 'deleted').flatMap((e) => (e.type === 'deleted' ? e.data.ids : []))).toEqual([1, 2, 3])
    await stream.close()
  })

  it('tells a record deleted through the API, and a clear', async () => {
    const { inspector: running } = await inspector()
    await deliverSigned(running.receiveUrl, 2)
    const stream = await openStream(running.uiUrl, running.accessToken)
    await stream.until(() => stream.listed.size === 2)
    const api = (path: string) =>
      fetch(`${new URL(running.uiUrl).origin}${path}`, { method: 'DELETE', headers: { 'x-inspect-token': running.accessToken } })
    expect((await api('/api/records/1')).status).toBe(200)
    await stream.until(() => !stream.listed.has(1))
    expect([...stream.listed]).toEqual([2])
    expect((await api('/api/records')).status).toBe(200)
    await stream.until(() => stream.events.at(-1)?.type === 'cleared')
    expect(stream.listed.size).toBe(0)
    await stream.close()
  })
})

describe('StreamQueue', () => {
  it('holds the changes in order while under its bound', () => {
    const queue = new StreamQueue<number>(3)
    for (const n of [1, 2, 3]) queue.push(n)
    expect(queue.take()).toEqual({ resync: false, items: [1, 2, 3] })
    expect(queue.empty).toBe(true)
  })

  it('holds no more than its bound for a reader that never reads, and owes it the ring instead', () => {
    const queue = new StreamQueue<number>(500)
    for (let n = 0; n < 100_000; n++) {
      queue.push(n)
    }
    const { resync, items } = queue.take()
    expect(resync).toBe(true)
    expect(items.length).toBeLessThanOrEqual(500)
    // What came after the drop is still told, after the ring.
    expect(items.at(-1)).toBe(99_999)
    expect(queue.take()).toEqual({ resync: false, items: [] })
  })
})
