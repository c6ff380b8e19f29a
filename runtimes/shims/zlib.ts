/**
 * `gzipSync` for the conformance table in the bundles, where `node:zlib` is absent (a Worker) or
 * must not be reached (the Web build). The table gzips at load time, so it has to be synchronous;
 * the output is real gzip (stored deflate blocks) so that a receiver which wrongly inflated the
 * body would read the signed JSON back, and the 415 case still tells that it did not.
 */

const MAX_STORED_BLOCK = 0xffff
const encoder = new TextEncoder()
let crcTable: Uint32Array | undefined

export function gzipSync(input: string | Uint8Array): Uint8Array {
  const data = typeof input === 'string' ? encoder.encode(input) : input
  const blocks = Math.max(1, Math.ceil(data.length / MAX_STORED_BLOCK))
  // RFC 1952 header: magic, deflate, no flags, no mtime, no extra flags, unknown OS.
  const out = new Uint8Array(10 + blocks * 5 + data.length + 8)
  out.set([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff])
  let at = 10
  for (let block = 0; block < blocks; block++) {
    const chunk = data.subarray(block * MAX_STORED_BLOCK, (block + 1) * MAX_STORED_BLOCK)
    // RFC 1951 §3.2.4: BFINAL and BTYPE=00, then LEN and its one's complement, little-endian.
    out.set([block === blocks - 1 ? 1 : 0, chunk.length & 0xff, chunk.length >>> 8, ~chunk.length & 0xff, (~chunk.length >>> 8) & 0xff], at)
    out.set(chunk, at + 5)
    at += 5 + chunk.length
  }
  const trailer = new DataView(out.buffer, at)
  trailer.setUint32(0, crc32(data), true)
  trailer.setUint32(4, data.length >>> 0, true)
  return out
}

function crc32(data: Uint8Array): number {
  crcTable ??= Uint32Array.from({ length: 256 }, (_, n) => {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    return c >>> 0
  })
  let crc = 0xffffffff
  for (const byte of data) crc = (crcTable[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}
