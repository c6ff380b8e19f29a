import { createReceiver } from '@hookguard/core'
import { fromFetchRequest, toFetchResponse } from '@hookguard/core/adapter'
import { describe, expect, it } from 'vitest'
import { wasDrained } from '../src/drain.ts'

const HOW = 'Read it later.'
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

/** A POST whose body arrives as a stream of `chunks`, with no Content-Length; records how far it was pulled. */
function streamed(chunks: string[], headers: Record<string, string> = {}) {
  const seen = { pulled: 0, cancelled: false }
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[seen.pulled++]
      if (chunk === undefined) controller.close()
      else controller.enqueue(new TextEncoder().encode(chunk))
    },
    cancel() {
      seen.cancelled = true
    },
  })
  const request = new Request('https://hooks.example/hooks?tenant=acme', { method: 'POST', headers, body, duplex: 'half' } as RequestInit)
  return { request, seen }
}

describe('fromFetchRequest', () => {
  it('hands the core the method, the absolute URL with its query, and the Fetch headers', () => {
    const request = new Request('https://hooks.example/hooks?access_token=t', { method: 'POST', headers: { 'x-a': '1' }, body: '{}' })
    const incoming = fromFetchRequest(request, { howToMount: HOW })
    expect(incoming.method).toBe('POST')
    expect(incoming.url).toBe('https://hooks.example/hooks?access_token=t')
    expect(incoming.headers).toBe(request.headers)
  })

  it('reads the headers it is given instead, and the core decides lengths from them', async () => {
    const request = new Request('https://hooks.example/hooks', { method: 'POST', body: '{"a":1}' })
    let wholeReads = 0
    const incoming = fromFetchRequest(request, {
      howToMount: HOW,
      headers: ['Content-Length', '7'],
      readAll: () => {
        wholeReads++
        return request.arrayBuffer()
      },
    })
    expect(incoming.headers).toEqual(['Content-Length', '7'])
    const result = await createReceiver({ auth: { mode: 'none' } }).verify(incoming)
    expect(result.ok && text(result.delivery.rawBody)).toBe('{"a":1}')
    expect(wholeReads).toBe(1)
  })

  describe('reading the body', () => {
    it('reads it whole when the core passes a declared length within the limit', async () => {
      const request = new Request('https://hooks.example/hooks', { method: 'POST', headers: { 'content-length': '7' }, body: '{"a":1}' })
      let wholeReads = 0
      const incoming = fromFetchRequest(request, {
        howToMount: HOW,
        readAll: () => {
          wholeReads++
          return request.arrayBuffer()
        },
      })
      expect(text(await incoming.body(7, 7))).toBe('{"a":1}')
      expect(wholeReads).toBe(1)
    })

    it('refuses as invalid_body a declared body read whole that has not come in full by the total bound', async () => {
      const request = new Request('https://hooks.example/hooks', { method: 'POST', headers: { 'content-length': '7' }, body: '{"a":1}' })
      const incoming = fromFetchRequest(request, {
        howToMount: HOW,
        readAll: () => new Promise<ArrayBuffer>(() => {}),
        receipt: { ms: 100, idleMs: 50 },
      })
      const started = performance.now()
      const error = await incoming.body(7, 7).then(
        () => undefined,
        (reason: unknown) => reason as { code?: string },
      )
      expect(error?.code).toBe('invalid_body')
      expect(performance.now() - started).toBeGreaterThanOrEqual(90)
      expect(performance.now() - started).toBeLessThan(1000)
    })

    it('streams it when no length is declared, and joins the chunks', async () => {
      const { request } = streamed(['{"a":', '1}'])
      const incoming = fromFetchRequest(request, { howToMount: HOW, readAll: () => Promise.reject(new Error('read whole')) })
      expect(text(await incoming.body(16, undefined))).toBe('{"a":1}')
      expect(request.bodyUsed).toBe(true)
    })

    it.each([
      ['no length', undefined],
      ['a length over the limit', 64],
    ])('with %s, streams it, refuses payload_too_large past the limit, and drains the rest to its end', async (_, declared) => {
      const { request, seen } = streamed(['1234', '5678', '9abc', 'defg'])
      const incoming = fromFetchRequest(request, { howToMount: HOW, readAll: () => Promise.reject(new Error('read whole')) })
      const error = await incoming.body(6, declared).catch((reason: unknown) => reason)
      expect(error).toMatchObject({ code: 'payload_too_large', status: 413 })
      expect(wasDrained(error)).toBe(true)
      // Every chunk, and the end: nothing of the body is left for the connection's next request.
      expect(seen.pulled).toBe(5)
      expect(seen.cancelled).toBe(false)
    })

    it('reads no body as empty', async () => {
      const incoming = fromFetchRequest(new Request('https://hooks.example/hooks', { method: 'POST' }), { howToMount: HOW })
      expect(await incoming.body(16, undefined)).toEqual(new Uint8Array(0))
    })

    it('refuses raw_body_unavailable, with the adapter’s fix, when the body was already read', async () => {
      const request = new Request('https://hooks.example/hooks', { method: 'POST', headers: { 'content-length': '2' }, body: '{}' })
      await request.text()
      const incoming = fromFetchRequest(request, { howToMount: HOW })
      await expect(incoming.body(16, 2)).rejects.toMatchObject({
        code: 'raw_body_unavailable',
        status: 500,
        message: expect.stringMatching(/Read it later\.$/),
      })
    })

    it('refuses raw_body_unavailable when someone holds a reader of the stream', async () => {
      const { request } = streamed(['{}'])
      request.body?.getReader()
      await expect(fromFetchRequest(request, { howToMount: HOW }).body(16, undefined)).rejects.toMatchObject({
        code: 'raw_body_unavailable',
      })
    })
  })
})

describe('toFetchResponse', () => {
  it('answers with the status, every header and the JSON body', async () => {
    const answer = toFetchResponse({
      status: 401,
      headers: { 'content-type': 'application/json; charset=utf-8', 'www-authenticate': 'Basic realm="webhook"', connection: 'close' },
      body: '{"error":"missing_credentials"}',
    })
    expect(answer.status).toBe(401)
    expect(answer.headers.get('www-authenticate')).toBe('Basic realm="webhook"')
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(await answer.text()).toBe('{"error":"missing_credentials"}')
  })
})
