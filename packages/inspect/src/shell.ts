/**
 * Writing a command a POSIX shell runs exactly as meant: text quoted so that nothing in it is
 * interpreted, bytes written back through `printf`, and credentials read from the environment.
 */

/** POSIX single quotes: `'` is closed, escaped and reopened, so nothing inside is interpreted. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`
}

/** What {@link printfFormat} writes for each byte, as bytes: the byte itself where it is written as it is. */
const PRINTF_TEXT: Uint8Array[] = Array.from({ length: 256 }, (_, byte) => {
  if (byte === 0x25) return Buffer.from('%%')
  if (byte === 0x5c) return Buffer.from('\\\\')
  if (byte === 0x27) return Buffer.from('\\047')
  if (byte >= 0x20 && byte < 0x7f) return Uint8Array.of(byte)
  return Buffer.from(`\\${byte.toString(8).padStart(3, '0')}`)
})

/**
 * A `printf` format for exactly these bytes: printable ASCII as it is (with `%` and `\` doubled),
 * every other byte as a three-digit octal escape, so NUL, newlines and UTF-8 survive any shell.
 * `printf` (POSIX) interprets the escapes in its format. A leading `-` is an escape too: as the
 * format's first character, `printf` would read it as an option (`-1`, `-n`) and write nothing.
 */
function printfFormat(bytes: Uint8Array): string {
  // Written into one buffer sized first, then decoded once: appending to a string a byte at a time
  // cost 170 ns a byte, a fifth of a second to export a body of a mebibyte.
  const leading = bytes[0] === 0x2d ? Buffer.from('\\055') : undefined
  let length = leading === undefined ? 0 : leading.length - 1
  for (const byte of bytes) length += (PRINTF_TEXT[byte] as Uint8Array).length
  const out = Buffer.allocUnsafe(length)
  let at = 0
  for (let index = 0; index < bytes.length; index++) {
    const text = index === 0 && leading !== undefined ? leading : (PRINTF_TEXT[bytes[index] as number] as Uint8Array)
    if (text.length === 1) out[at++] = text[0] as number
    else {
      out.set(text, at)
      at += text.length
    }
  }
  return out.toString('latin1')
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
 * not stop the script.
 */
export function percentEncodedWord(variable: string): string {
  if (!/^[A-Z_][A-Z0-9_]*$/.test(variable)) throw new TypeError(`@hookguard/inspect: not a variable name: ${variable}`)
  return `"$(printf '%s' "\${${variable}}" | od -An -v -tx1 | tr -d ' \\n' | sed 's/../%&/g')"`
}

/**
 * Text from a request as a comment may show it: one quoted shell word of printable ASCII
 * ({@link shellBytes}), so that no byte of it (a newline above all) can end the comment.
 */
export function commentWord(text: string): string {
  return shellBytes(Buffer.from(text, 'latin1'))
}
