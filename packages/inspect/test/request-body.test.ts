import type { IncomingMessage } from 'node:http'
import { PassThrough } from 'node:stream'
import { digitText, writeOneByteChunks } from '@hookguard/testkit/chunks'
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
    const { req, stream } = streamed()
    const capture = captureBody(req, 1024 * 1024, 5_000)
    // Kept chunk by chunk, such a body held an object for every byte while it arrived.
    const held = await writeOneByteChunks(stream, 4096)
    stream.end()
    expect(await capture.done).toBe('end')
    const { body, truncated, total } = capture.result()
    expect([Buffer.from(body).toString(), truncated, total]).toEqual([digitText(4096), false, 4096])
    expect(held).toBeLessThanOrEqual(2)
  })
})
