/** Node's raw header lines (names and values alternating), as a proxy reads and writes them. */

/**
 * RFC 9110 §7.6.1: the headers that describe one connection, not the message; a proxy drops them,
 * and every header the `Connection` header names.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
])

/** The names the `Connection` header lists, lower-cased. */
function connectionOptions(rawHeaders: readonly string[]): Set<string> {
  const named = new Set<string>()
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if ((rawHeaders[i] as string).toLowerCase() !== 'connection') continue
    for (const name of (rawHeaders[i + 1] as string).split(',')) named.add(name.trim().toLowerCase())
  }
  return named
}

/**
 * The headers a proxy drops only because `Connection` names them (names as received, once each):
 * the app never sees them, though they belong to the message hookguard judged.
 */
export function droppedByConnection(rawHeaders: readonly string[]): string[] {
  const named = connectionOptions(rawHeaders)
  const out = new Map<string, string>()
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string
    const lower = name.toLowerCase()
    if (named.has(lower) && !HOP_BY_HOP.has(lower) && !out.has(lower)) out.set(lower, name)
  }
  return [...out.values()]
}

export function endToEnd(rawHeaders: readonly string[]): string[] {
  const named = connectionOptions(rawHeaders)
  const out: string[] = []
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase()
    if (HOP_BY_HOP.has(name) || named.has(name)) continue
    out.push(rawHeaders[i] as string, rawHeaders[i + 1] as string)
  }
  return out
}

export function withoutHeader(rawHeaders: readonly string[], name: string): string[] {
  const out: string[] = []
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if ((rawHeaders[i] as string).toLowerCase() === name) continue
    out.push(rawHeaders[i] as string, rawHeaders[i + 1] as string)
  }
  return out
}

export function headerValue(rawHeaders: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) if ((rawHeaders[i] as string).toLowerCase() === name) return rawHeaders[i + 1]
  return undefined
}

export function pairs(rawHeaders: readonly string[]): [string, string][] {
  const out: [string, string][] = []
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) out.push([rawHeaders[i] as string, rawHeaders[i + 1] as string])
  return out
}
