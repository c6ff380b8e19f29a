import { escapeLikeGson } from '@hookguard/core/adapter'

/**
 * A JSON text as Gson writes it (HTML-safe escapes), optionally indented, for property tests.
 * Values from `fc.jsonValue()` hold no nulls in objects that Gson would drop, so this is faithful
 * enough to sign the way the service does.
 */
export function gsonText(value: unknown, indent?: number): string {
  const text = new TextEncoder().encode(JSON.stringify(value, null, indent))
  return new TextDecoder().decode(escapeLikeGson(text) ?? text)
}
