/** Checks shared by the emulator's entry points; each failure is a `TypeError` named for the package. */

export function fail(message: string): never {
  throw new TypeError(`@hookguard/emulator: ${message}`)
}

export function checkString(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.length === 0) fail(`${name} must be a non-empty string`)
  return value
}

/** An absolute http(s) URL, parsed. The message names the option, never the value, which may hold credentials. */
export function checkUrl(value: unknown, name: string): URL {
  let url: URL | undefined
  if (value instanceof URL) url = new URL(value.href)
  else if (typeof value === 'string' && URL.canParse(value)) url = new URL(value)
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    fail(`${name} must be an absolute http:// or https:// URL`)
  return url
}

export function checkFetch(value: unknown): typeof fetch {
  if (value === undefined) return globalThis.fetch
  if (typeof value !== 'function') fail('fetch must be a function with the signature of the global fetch')
  return value as typeof fetch
}
