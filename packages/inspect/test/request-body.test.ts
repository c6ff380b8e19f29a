import type { IncomingMessage } from 'node:http'
import { PassThrough } from 'node:stream'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { captureBody } from '../src/request-body.ts'

/** A request as captureBody reads it: a stream of the sender's chunks, ended when the test says. */
function streamed(): { req: IncomingMessage; stream: PassThrough } {
  const stream = new PassThrough()
  return { req: Object.assign(stream, { complete: true }) as unknown as IncomingMessage, stream }
}

describe('captureBody', () => {
  it('keeps the first bytes up to its limit and counts the rest', async () => {
    const { req, stream } = streamed()
    const capture = captureBody(req, 5, 5_000)
    for (const chunk of ['ab', 'cd', 'efgh', 'ij']) stream.write(chunk)
    stream.end()
    expect(await capture.done).toBe('end')
    const { body, truncated, total } = capture.result()
    expect([Buffer.from(body).toString(), truncated, total]).toEqual(['abcde', true, 10])
  })

  it('holds a body sent a byte at a time in pieces: of 4 096 one-byte chunks, only the first stays reachable', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const { req, stream } = streamed()
    const capture = captureBody(req, 1024 * 1024, 5_000)
    // Kept chunk by chunk, such a body held an object for every byte while it arrived.
    const sent: WeakRef<Buffer>[] = []
    for (let i = 0; i < 4096; i++) {
      const chunk = Buffer.from([0x30 + (i % 10)])
      sent.push(new WeakRef(chunk))
      stream.write(chunk)
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
    gc()
    const alive = sent.filter((chunk) => chunk.deref() !== undefined).length
    stream.end()
    expect(await capture.done).toBe('end')
    const { body, truncated, total } = capture.result()
    expect([Buffer.from(body).toString(), truncated, total]).toEqual(['0123456789'.repeat(410).slice(0, 4096), false, 4096])
    expect(alive).toBeLessThanOrEqual(2)
  })
})
