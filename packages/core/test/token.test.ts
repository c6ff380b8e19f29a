import { sign, verifySignature } from '@hookguard/core'
import { describe, expect, it, vi } from 'vitest'
import { backend } from '#crypto'
import { checkToken, deriveTokenKey, issueToken, TOKEN_KEY_ITERATIONS } from '../src/token.ts'

const NOW = Date.UTC(2026, 0, 1)
/** Issued for app `wx-app-1042`, secret `oauth-secret-4f1d9a`, at NOW, for 7200 s. */
const KNOWN_TOKEN =
  'eyJ2IjoyLCJhcHAiOiJ3eC1hcHAtMTA0MiIsImlhdCI6MTc2NzIyNTYwMCwiZXhwIjoxNzY3MjMyODAwfQ.LZ9A9w1Phi7IOEcq3CHyufb16oEjSGfRVW2ilFR4OUM'

describe('stateless access tokens', () => {
  it('are accepted until they expire, then answered as expired', async () => {
    const key = await deriveTokenKey('app-secret', 'app-1')
    const token = await issueToken(key, 'app-1', 7200, NOW)
    expect(await checkToken(token, [key], 'app-1', NOW)).toBe('valid')
    expect(await checkToken(token, [key], 'app-1', NOW + 7199_000)).toBe('valid')
    expect(await checkToken(token, [key], 'app-1', NOW + 7200_000)).toBe('expired')
  })

  it('are accepted by any receiver that derives the same key, with nothing stored', async () => {
    const token = await issueToken(await deriveTokenKey('shared', 'app-1'), 'app-1', 60, NOW)
    expect(await checkToken(token, [await deriveTokenKey('shared', 'app-1')], 'app-1', NOW)).toBe('valid')
  })

  it('are refused for another app', async () => {
    const key = await deriveTokenKey('app-secret', 'app-1')
    expect(await checkToken(await issueToken(key, 'app-1', 60, NOW), [key], 'app-2', NOW)).toBe('invalid')
  })

  it('are refused when signed with another key', async () => {
    const token = await issueToken(await deriveTokenKey('other', 'app-1'), 'app-1', 60, NOW)
    expect(await checkToken(token, [await deriveTokenKey('app-secret', 'app-1')], 'app-1', NOW)).toBe('invalid')
  })

  it('are still accepted from a rotated-out key while it is listed', async () => {
    const [current, previous] = await Promise.all([deriveTokenKey('k2', 'app-1'), deriveTokenKey('k1', 'app-1')])
    const token = await issueToken(previous, 'app-1', 60, NOW)
    expect(await checkToken(token, [current, previous], 'app-1', NOW)).toBe('valid')
    expect(await checkToken(token, [current], 'app-1', NOW)).toBe('invalid')
  })

  it('are refused after any change to the claims, even one that extends the expiry', async () => {
    const key = await deriveTokenKey('app-secret', 'app-1')
    const token = await issueToken(key, 'app-1', 60, NOW)
    const [body, mac] = token.split('.') as [string, string]
    const claims = JSON.parse(atob(body.replace(/-/g, '+').replace(/_/g, '/')))
    const forged = btoa(JSON.stringify({ ...claims, exp: claims.exp + 86_400 }))
      .replace(/=+$/, '')
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
    expect(await checkToken(`${forged}.${mac}`, [key], 'app-1', NOW)).toBe('invalid')
  })

  for (const [label, token] of [
    ['empty', ''],
    ['without a dot', 'abc'],
    ['with three parts', 'a.b.c'],
    ['with a MAC that is not base64url', 'abc.***'],
    ['absurdly long', `${'a'.repeat(5000)}.b`],
  ] as const) {
    it(`are refused when ${label}`, async () => {
      expect(await checkToken(token, [await deriveTokenKey('s', 'app-1')], 'app-1', NOW)).toBe('invalid')
    })
  }

  it('are refused for another app configured with the same secret: the app id salts the key', async () => {
    const token = await issueToken(await deriveTokenKey('shared', 'app-1'), 'app-2', 60, NOW)
    expect(await checkToken(token, [await deriveTokenKey('shared', 'app-2')], 'app-2', NOW)).toBe('invalid')
  })

  it('sign with PBKDF2-HMAC-SHA256 of the secret, 100 000 rounds, salted with the label and app id', async () => {
    // An independent derivation by Web Crypto: pins the label, the salt, the rounds and the MAC.
    const encode = (text: string) => new TextEncoder().encode(text)
    const material = await crypto.subtle.importKey('raw', encode('app-secret'), 'PBKDF2', false, ['deriveBits'])
    const salt = encode('hookguard oauth2 access-token key v2\u0000app-1')
    const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations: 100_000 }, material, 256)
    const macKey = await crypto.subtle.importKey('raw', bits, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
    const token = await issueToken(await deriveTokenKey('app-secret', 'app-1'), 'app-1', 60, NOW)
    const [body, mac] = token.split('.') as [string, string]
    const expected = new Uint8Array(await crypto.subtle.sign('HMAC', macKey, encode(body)))
    expect(mac).toBe(
      btoa(String.fromCharCode(...expected))
        .replace(/=+$/, '')
        .replace(/\+/g, '-')
        .replace(/\//g, '_'),
    )
    expect(JSON.parse(atob(body))).toEqual({ v: 2, app: 'app-1', iat: NOW / 1000, exp: NOW / 1000 + 60 })
    expect(TOKEN_KEY_ITERATIONS).toBe(100_000)
  })

  it('match a known answer, the same on every build', async () => {
    const token = await issueToken(await deriveTokenKey('oauth-secret-4f1d9a', 'wx-app-1042'), 'wx-app-1042', 7200, NOW)
    expect(token).toBe(KNOWN_TOKEN)
  })

  it('do not derive their key as the secret itself', async () => {
    const token = await issueToken(await deriveTokenKey('app-secret', 'app-1'), 'app-1', 60, NOW)
    expect(token).not.toContain('app-secret')
  })

  it('are refused when longer than 1024 characters, even when authentic', async () => {
    const key = await deriveTokenKey('app-secret', 'app-1')
    // The app id sets the length: 735 bytes of claims make 980 of base64url, then the dot and the MAC.
    const atCapApp = `app-${'x'.repeat(681)}`
    const atCap = await issueToken(key, atCapApp, 60, NOW)
    expect(atCap.length).toBe(1024)
    expect(await checkToken(atCap, [key], atCapApp, NOW)).toBe('valid')
    const longApp = `app-${'x'.repeat(800)}`
    const long = await issueToken(key, longApp, 60, NOW)
    expect(long.length).toBeGreaterThan(1024)
    expect(await checkToken(long, [key], longApp, NOW)).toBe('invalid')
  })

  describe('with authentic MACs over claims the issuer never writes', () => {
    const toBase64Url = (bytes: Uint8Array) =>
      btoa(String.fromCharCode(...bytes))
        .replace(/=+$/, '')
        .replace(/\+/g, '-')
        .replace(/\//g, '_')
    /** A token with a valid MAC over `claims`, as only the key holder (or an older version) could write. */
    async function authentic(claims: string): Promise<{ token: string; key: Awaited<ReturnType<typeof deriveTokenKey>> }> {
      const key = await deriveTokenKey('app-secret', 'app-1')
      const body = toBase64Url(new TextEncoder().encode(claims))
      const [mac] = await backend.hmac([key], new TextEncoder().encode(body))
      return { token: `${body}.${toBase64Url(mac as Uint8Array)}`, key }
    }
    const exp = NOW / 1000 + 60
    for (const [label, claims] of [
      ['of another version', { v: 1, app: 'app-1', iat: NOW / 1000, exp }],
      ['with no issue time', { v: 2, app: 'app-1', exp }],
      ['with an expiry that is not a number', { v: 2, app: 'app-1', iat: NOW / 1000, exp: String(exp) }],
    ] as const) {
      it(`refuses a token ${label}`, async () => {
        const { token, key } = await authentic(JSON.stringify(claims))
        expect(await checkToken(token, [key], 'app-1', NOW)).toBe('invalid')
      })
    }

    it('accepts the same claims when well formed, so the refusals above are the claims', async () => {
      const { token, key } = await authentic(JSON.stringify({ v: 2, app: 'app-1', iat: NOW / 1000, exp }))
      expect(await checkToken(token, [key], 'app-1', NOW)).toBe('valid')
    })
  })
})

describe('a key derivation or import that fails', () => {
  it('is not remembered: the next token for the same app derives again and verifies', async () => {
    const spy = vi.spyOn(backend, 'pbkdf2Sha256').mockRejectedValueOnce(new Error('out of memory'))
    try {
      await expect(deriveTokenKey('transient-failure-secret', 'wx-app-fault')).rejects.toThrow('out of memory')
      const key = await deriveTokenKey('transient-failure-secret', 'wx-app-fault')
      const token = await issueToken(key, 'wx-app-fault', 60, Date.now())
      expect(await checkToken(token, [key], 'wx-app-fault', Date.now())).toBe('valid')
    } finally {
      spy.mockRestore()
    }
  })

  it('is not remembered for a signing secret either: the next verification imports the key again', async () => {
    const spy = vi.spyOn(backend, 'importHmacKey').mockRejectedValueOnce(new Error('import failed'))
    try {
      const secret = 'whsec-transient-import-failure'
      const signature = await sign('{"a":1}', secret).catch(() => undefined)
      expect(signature).toBeUndefined()
      expect(await verifySignature('{"a":1}', await sign('{"a":1}', secret), secret)).toBe(true)
    } finally {
      spy.mockRestore()
    }
  })
})
