const encoder = new TextEncoder()

/**
 * `Basic base64(appId:appSecret)` over the UTF-8 bytes (RFC 7617 §2.1): `btoa` alone takes only
 * Latin-1 and throws on anything else.
 */
export function basicAuthorization(appId: string, appSecret: string): string {
  const bytes = encoder.encode(`${appId}:${appSecret}`)
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return `Basic ${btoa(binary)}`
}
