import { terminalBlock } from '@hookguard/inspect/cli'

/** Lines of an answer that is not JSON shown by `send`: enough to recognise an error page. */
export const PREVIEW_LINES = 10
/** Bytes of it shown at most, whatever its lines. */
export const PREVIEW_BYTES = 2048
/** A JSON answer larger than this is previewed like any other: no receiver's answer is that large. */
export const JSON_WHOLE_BYTES = 64 * 1024

/**
 * What `hookguard send` prints of an answer's body. A JSON answer (the receiver's refusals, most
 * apps' replies) whole, as it came. Anything else (a framework's 30 KB HTML error page, a proxy's
 * text) by its content type and its first {@link PREVIEW_LINES} lines, at most
 * {@link PREVIEW_BYTES} bytes, then how many bytes were left out: the terminal shows the status and
 * the page's title, not a screenful of markup. Control characters other than tab and line ends are
 * replaced, so that an answer cannot drive the terminal.
 */
export function answerText(body: string, contentType: string | undefined, withType: boolean, truncated = false): string {
  if (body === '') return body
  if (!truncated && isJson(body, contentType)) {
    // JSON text holds no raw control character but whitespace; a string may still hold a bidi override.
    const safe = terminalBlock(body)
    return safe.endsWith('\n') ? safe : `${safe}\n`
  }
  let end = -1
  for (let line = 0; line < PREVIEW_LINES; line++) {
    end = body.indexOf('\n', end + 1)
    if (end < 0) break
  }
  const lines = end < 0 ? body : body.slice(0, end + 1)
  const bytes = new TextEncoder().encode(lines)
  // `stream`: a character cut at the byte bound is left out, not shown as U+FFFD.
  const shown = bytes.byteLength <= PREVIEW_BYTES ? lines : new TextDecoder().decode(bytes.subarray(0, PREVIEW_BYTES), { stream: true })
  const left = new TextEncoder().encode(body).byteLength - new TextEncoder().encode(shown).byteLength
  const out: string[] = []
  if (withType) out.push(`content-type: ${contentType ?? '(none)'}\n`)
  const safe = terminalBlock(shown)
  out.push(safe.endsWith('\n') ? safe : `${safe}\n`)
  if (truncated) out.push(`… ${left} more bytes, and more not read\n`)
  else if (left > 0) out.push(`… ${left} more bytes\n`)
  return out.join('')
}

/**
 * JSON, printed whole: typed so (`application/json`, `application/problem+json`), plain text or
 * untyped, and in every case parsing as JSON and no larger than {@link JSON_WHOLE_BYTES}. A type
 * alone is the answer's own claim: an app's error page sent as `application/json` is previewed.
 */
function isJson(body: string, contentType: string | undefined): boolean {
  if (contentType !== undefined && !/[/+]json\b/i.test(contentType) && !/^text\/plain\b/i.test(contentType)) return false
  if (body.length > JSON_WHOLE_BYTES || new TextEncoder().encode(body).byteLength > JSON_WHOLE_BYTES) return false
  try {
    JSON.parse(body)
    return true
  } catch {
    return false
  }
}
