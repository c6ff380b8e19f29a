export type QueryValue = string | number | boolean

/** Query parameters; `undefined` and `null` are left out, an array repeats the name. */
export type Query = Record<string, QueryValue | readonly QueryValue[] | null | undefined>

/**
 * Percent-encodes every name and value with `encodeURIComponent` (RFC 3986), so `+`, `%`, `=`, `&`
 * and spaces arrive as sent. `URLSearchParams` is not used on purpose: it writes a space as `+`,
 * and a server that decodes by form rules would read a literal `+` the same way, turning
 * `+8613800138000` into ` 8613800138000`.
 */
export function encodeQuery(query: Query | undefined): string {
  if (query === undefined) return ''
  const parts: string[] = []
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue
    const items: readonly unknown[] = Array.isArray(value) ? value : [value]
    for (const item of items) {
      if (typeof item !== 'string' && typeof item !== 'number' && typeof item !== 'boolean') {
        throw new TypeError(`@hookguard/client: query parameter ${JSON.stringify(name)} must be a string, number or boolean`)
      }
      parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(String(item))}`)
    }
  }
  return parts.join('&')
}
