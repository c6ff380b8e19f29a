// ignoreBOM keeps a leading U+FEFF, as Buffer does on Node: decoding is then the same everywhere.
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Strict UTF-8 decoding: throws a `TypeError` on malformed input rather than inserting U+FFFD. */
export function decodeUtf8(data: Uint8Array): string {
  return strictDecoder.decode(data)
}
