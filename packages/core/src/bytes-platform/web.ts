// ignoreBOM keeps a leading U+FEFF, as Buffer does on Node: decoding is then the same everywhere.
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Strict UTF-8 decoding: throws a `TypeError` on malformed input rather than inserting U+FFFD. */
export function decodeUtf8(data: Uint8Array): string {
  return strictDecoder.decode(data)
}

/** The words of a view too short to hold an aligned one. */
const NO_WORDS = new Uint32Array(0)

/**
 * Whether the bytes are well-formed UTF-8 (the Unicode Standard's table 3-7): what the strict
 * decoder accepts, told without making the text. Asking the decoder built the whole string to
 * answer, 3 to 10 times one HMAC of a 1 MiB body on Node 20 and 24, Deno and Bun (bench/notes.md,
 * 2 December). This reads each byte once, and a run of ASCII (most of a JSON body) a 4-byte
 * word at a time from the first word-aligned byte on.
 */
export function isUtf8Bytes(data: Uint8Array): boolean {
  const length = data.length
  const head = (4 - (data.byteOffset & 3)) & 3
  const words = length >= head + 4 ? new Uint32Array(data.buffer, data.byteOffset + head, (length - head) >>> 2) : NO_WORDS
  let i = 0
  while (i < length) {
    const lead = data[i] as number
    if (lead < 0x80) {
      i++
      if (i >= head && ((i - head) & 3) === 0) {
        let word = (i - head) >>> 2
        while (word < words.length && ((words[word] as number) & 0x80808080) === 0) word++
        i = head + word * 4
      }
      continue
    }
    // A read past the end is undefined, which `& 0xc0` makes 0: a character cut short is refused by the same test.
    const second = data[i + 1] as number
    if (lead < 0xc2 || lead > 0xf4 || (second & 0xc0) !== 0x80) return false
    if (lead < 0xe0) {
      i += 2
      continue
    }
    // The second byte's narrower ranges: no overlong form (E0, F0), no surrogate (ED), nothing past U+10FFFF (F4).
    if (lead === 0xe0 ? second < 0xa0 : lead === 0xed ? second > 0x9f : lead === 0xf0 ? second < 0x90 : lead === 0xf4 && second > 0x8f) {
      return false
    }
    if (((data[i + 2] as number) & 0xc0) !== 0x80) return false
    if (lead < 0xf0) {
      i += 3
      continue
    }
    if (((data[i + 3] as number) & 0xc0) !== 0x80) return false
    i += 4
  }
  return true
}

/** Whether any of `values` occurs in `data`. */
export function containsAnyByte(data: Uint8Array, values: readonly number[]): boolean {
  const wanted = new Uint8Array(256)
  for (const value of values) wanted[value] = 1
  for (let i = 0; i < data.length; i++) if (wanted[data[i] as number] === 1) return true
  return false
}

/** Whether the bytes in `values` occur more than `limit` times in all (the engine's native `indexOf`). */
export function occursMoreThan(data: Uint8Array, values: readonly number[], limit: number): boolean {
  let count = 0
  for (const value of values) {
    for (let at = data.indexOf(value); at !== -1; at = data.indexOf(value, at + 1)) {
      if (++count > limit) return true
    }
  }
  return false
}

/** Where `value` next occurs in `data` from `from`, or -1 (the engine's native `indexOf`). */
export function indexOfByte(data: Uint8Array, value: number, from: number): number {
  return data.indexOf(value, from)
}

/** Bytes per `String.fromCharCode` call: far below any engine's limit on a call's arguments. */
const CHUNK = 0x2000

/**
 * Standard padded base64 through `btoa`, whose input is a binary string: built a chunk at a time,
 * since one character at a time makes a 1 MiB body a million string concatenations.
 */
export function toBase64(data: Uint8Array): string {
  let binary = ''
  for (let at = 0; at < data.length; at += CHUNK) {
    binary += String.fromCharCode.apply(null, data.subarray(at, at + CHUNK) as unknown as number[])
  }
  return btoa(binary)
}

/** The value of each hex digit by character code, -1 for anything else. */
const HEX_VALUE = new Int8Array(128).fill(-1)
for (let i = 0; i < 16; i++) {
  HEX_VALUE[i.toString(16).charCodeAt(0)] = i
  HEX_VALUE[i.toString(16).toUpperCase().charCodeAt(0)] = i
}

/** Decodes hex of either case; `undefined` for odd lengths or any character outside 0-9 a-f A-F. */
export function fromHex(text: string): Uint8Array | undefined {
  if (text.length % 2 !== 0) return undefined
  const out = new Uint8Array(text.length / 2)
  for (let i = 0; i < out.length; i++) {
    const hi = HEX_VALUE[text.charCodeAt(2 * i)] ?? -1
    const lo = HEX_VALUE[text.charCodeAt(2 * i + 1)] ?? -1
    if (hi < 0 || lo < 0) return undefined
    out[i] = (hi << 4) | lo
  }
  return out
}
