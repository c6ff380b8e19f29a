import type { Writable } from 'node:stream'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** The text of {@link writeOneByteChunks}'s chunks: the digits in turn. */
export function digitText(count: number): string {
  return '0123456789'.repeat(Math.ceil(count / 10)).slice(0, count)
}

/**
 * Writes `count` one-byte chunks into `stream` (a body a sender splits a byte to a chunk), each
 * watched by a weak reference, then lets the reader take them and collects the garbage: how many
 * of them are still reachable. A reader that keeps every chunk holds all of them.
 */
export async function writeOneByteChunks(stream: Writable, count: number): Promise<number> {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const text = digitText(count)
  const sent: WeakRef<Buffer>[] = []
  for (let i = 0; i < count; i++) {
    const chunk = Buffer.from(text[i] as string)
    sent.push(new WeakRef(chunk))
    stream.write(chunk)
  }
  await new Promise((resolve) => setTimeout(resolve, 10))
  gc()
  return sent.filter((chunk) => chunk.deref() !== undefined).length
}
