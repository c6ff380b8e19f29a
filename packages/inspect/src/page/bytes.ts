/** A body as the page receives it (base64) back to its bytes. */
export function base64Bytes(text: string): Uint8Array {
  const binary = atob(text)
  const out = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i)
  return out
}

const HEX_DUMP_LIMIT = 64 * 1024

/** Offset, 16 bytes in hex, and their printable ASCII, a line each; the first 64 KiB. */
export function hexDump(bytes: Uint8Array): string {
  const lines: string[] = []
  const max = Math.min(bytes.length, HEX_DUMP_LIMIT)
  for (let offset = 0; offset < max; offset += 16) {
    const slice = bytes.subarray(offset, Math.min(offset + 16, max))
    const hex = [...slice].map((b) => b.toString(16).padStart(2, '0')).join(' ')
    const ascii = [...slice].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('')
    lines.push(`${offset.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${ascii}`)
  }
  if (bytes.length > max) lines.push(`… ${bytes.length - max} more bytes`)
  return lines.join('\n')
}
