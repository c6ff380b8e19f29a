import { payloadTooLarge } from './errors.ts'

/**
 * Reads a Web stream to its end, refusing with `payload_too_large` as soon as more than `limit`
 * bytes have arrived; the rest of the stream is cancelled, not read. For runtimes whose request
 * body is a `ReadableStream` (Hono, Bun, Deno, Workers).
 */
export async function readLimited(stream: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array> {
  if (stream === null) return new Uint8Array(0)
  const reader = stream.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw payloadTooLarge(limit)
    }
    chunks.push(value)
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    body.set(chunk, offset)
    offset += chunk.byteLength
  }
  return body
}
