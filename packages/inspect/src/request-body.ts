import type { IncomingMessage } from 'node:http'
import { BodyBytes } from '@hookguard/core/adapter'

/** How reading a request's body ended: its end, the sender gone, or its time up. */
export type BodyEnd = 'end' | 'closed' | 'timeout'

export interface BodyCapture {
  done: Promise<BodyEnd>
  result(): { body: Uint8Array; truncated: boolean; total: number }
}

/**
 * Reads a request's body as it streams: the first `limit` bytes kept, the rest only counted. The
 * whole body must arrive within `timeoutMs` of its headers: a chunked body that never ends (or
 * trickles) would otherwise hold its connection and its record until Node's own 5-minute limit.
 */
export function captureBody(req: IncomingMessage, limit: number, timeoutMs: number): BodyCapture {
  // In pieces: a sender that writes a byte to a chunk would otherwise hold an object per byte kept.
  const kept = new BodyBytes()
  let total = 0
  const done = new Promise<BodyEnd>((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), timeoutMs)
    const settle = (end: BodyEnd) => {
      clearTimeout(timer)
      resolve(end)
    }
    req.on('data', (chunk: Buffer) => {
      total += chunk.byteLength
      if (kept.size >= limit + 1) return
      const room = limit + 1 - kept.size
      kept.add(chunk.byteLength <= room ? chunk : chunk.subarray(0, room))
    })
    req.once('end', () => settle('end'))
    // A sender that goes away mid-body: what arrived is what is recorded.
    req.once('close', () => settle(req.complete ? 'end' : 'closed'))
    req.once('error', () => settle('closed'))
  })
  return {
    done,
    result() {
      const all = kept.bytes()
      const truncated = all.byteLength > limit
      return { body: new Uint8Array(truncated ? all.subarray(0, limit) : all), truncated, total }
    },
  }
}
