/**
 * Writing a command a POSIX shell runs exactly as meant: text quoted so that nothing in it is
 * interpreted, bytes written back through `printf`, and credentials read from the environment.
 */

/** POSIX single quotes: `'` is closed, escaped and reopened, so nothing inside is interpreted. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`
}

/** The text {@link printfFormat} writes for a byte: the byte itself where it is written as it is. */
function printfText(byte: number): string {
  if (byte === 0x25) return '%%'
  if (byte === 0x5c) return '\\\\'
  if (byte === 0x27) return '\\047'
  if (byte >= 0x20 && byte < 0x7f) return String.fromCharCode(byte)
  return `\\${byte.toString(8).padStart(3, '0')}`
}

/**
 * Each byte's text, one to four bytes, at `byte * 4` in one flat table, and its length: two typed
 * arrays read by index, where a table of 256 buffers cost a look-up of a polymorphic element and
 * a call to `set` for every byte escaped.
 */
const TEXT = new Uint8Array(256 * 4)
const TEXT_LENGTH = new Uint8Array(256)
for (let byte = 0; byte < 256; byte++) {
  const text = printfText(byte)
  TEXT_LENGTH[byte] = text.length
  for (let at = 0; at < text.length; at++) TEXT[byte * 4 + at] = text.charCodeAt(at)
}

/**
 * A `printf` format for exactly these bytes: printable ASCII as it is (with `%` and `\` doubled),
 * every other byte as a three-digit octal escape, so NUL, newlines and UTF-8 survive any shell.
 * `printf` (POSIX) interprets the escapes in its format. A leading `-` is an escape too: as the
 * format's first character, `printf` would read it as an option (`-1`, `-n`) and write nothing.
 */
function printfFormat(bytes: Uint8Array): string {
  // Written into one buffer sized first, then decoded once: appending to a string a byte at a time
  // cost 170 ns a byte, a fifth of a second to export a body of a mebibyte.
  const dash = bytes[0] === 0x2d
  let length = dash ? 3 : 0
  for (let index = 0; index < bytes.length; index++) length += TEXT_LENGTH[bytes[index] as number] as number
  // Nothing to escape: the bytes are the format.
  if (length === bytes.length) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1')
  // Three bytes of room past the end: every byte's four table bytes are copied, and the next byte's
  // text, or the end, takes the place of those past its own length.
  const out = Buffer.allocUnsafe(length + 3)
  let at = 0
  let index = 0
  if (dash) {
    at = out.write('\\055', 0, 'latin1')
    index = 1
  }
  for (; index < bytes.length; index++) {
    const byte = bytes[index] as number
    const from = byte * 4
    out[at] = TEXT[from] as number
    out[at + 1] = TEXT[from + 1] as number
    out[at + 2] = TEXT[from + 2] as number
    out[at + 3] = TEXT[from + 3] as number
    at += TEXT_LENGTH[byte] as number
  }
  return out.toString('latin1', 0, length)
}

/** `printf` writing exactly these bytes. */
export function printfBytes(body: Uint8Array): string {
  return `printf '${printfFormat(body)}'`
}

/**
 * One argument holding exactly these bytes. Printable ASCII is quoted as it is; anything else
 * comes from `printf` in a command substitution, since the command's own text is UTF-8 and a
 * header's bytes may not be (a latin1 byte), or would be encoded twice if written as the
 * characters Node reads them as.
 */
export function shellBytes(bytes: Uint8Array): string {
  const printable = bytes.every((byte) => byte >= 0x20 && byte < 0x7f)
  return printable ? shellQuote(Buffer.from(bytes).toString('latin1')) : `"$(${printfBytes(bytes)})"`
}

/**
 * An environment variable's value, in double quotes (no splitting, no globbing), and the command
 * stops, naming the variable, when it is unset or empty rather than send an empty credential.
 */
export function fromEnvironment(variable: string): string {
  if (!/^[A-Z_][A-Z0-9_]*$/.test(variable)) throw new TypeError(`@hookguard/inspect: not a variable name: ${variable}`)
  return `"\${${variable}:?}"`
}

/**
 * One argument holding an environment variable's value percent-encoded, every byte as `%xx`
 * (valid in a query or a form, whatever the value holds), with POSIX tools only. The variable is
 * checked before (see {@link fromEnvironment}): in a command substitution, a failed `:?` would
 * not stop the script. One `sed` both writes the `%` and joins `od`'s lines: each tool in the
 * pipe is a process more, and a script may encode many credentials.
 */
export function percentEncodedWord(variable: string): string {
  if (!/^[A-Z_][A-Z0-9_]*$/.test(variable)) throw new TypeError(`@hookguard/inspect: not a variable name: ${variable}`)
  return `"$(printf '%s' "\${${variable}}" | od -An -v -tx1 | sed -e 's/[^0-9a-f]//g' -e 's/../%&/g' -e 'H;$!d;x;s/\\n//g')"`
}

/**
 * Text from a request as a comment may show it: one quoted shell word of printable ASCII
 * ({@link shellBytes}), so that no byte of it (a newline above all) can end the comment.
 */
export function commentWord(text: string): string {
  return shellBytes(Buffer.from(text, 'latin1'))
}
