import { describe, expect, it } from 'vitest'
import { checkToken, deriveTokenKey, issueToken } from '../src/token.ts'

const NOW = Date.UTC(2026, 0, 1)

describe('stateless access tokens', () => {
  it('are accepted until they expire, then answered as expired', async () => {
    const key = await deriveTokenKey('app-secret')
    const token = await issueToken(key, 'app-1', 7200, NOW)
    expect(await checkToken(token, [key], 'app-1', NOW)).toBe('valid')
    expect(await checkToken(token, [key], 'app-1', NOW + 7199_000)).toBe('valid')
    expect(await checkToken(token, [key], 'app-1', NOW + 7200_000)).toBe('expired')
  })

  it('are accepted by any receiver that derives the same key, with nothing stored', async () => {
    const token = await issueToken(await deriveTokenKey('shared'), 'app-1', 60, NOW)
    expect(await checkToken(token, [await deriveTokenKey('shared')], 'app-1', NOW)).toBe('valid')
  })

  it('are refused for another app', async () => {
    const key = await deriveTokenKey('app-secret')
    expect(await checkToken(await issueToken(key, 'app-1', 60, NOW), [key], 'app-2', NOW)).toBe('invalid')
  })

  it('are refused when signed with another key', async () => {
    const token = await issueToken(await deriveTokenKey('other'), 'app-1', 60, NOW)
    expect(await checkToken(token, [await deriveTokenKey('app-secret')], 'app-1', NOW)).toBe('invalid')
  })

  it('are still accepted from a rotated-out key while it is listed', async () => {
    const [current, previous] = await Promise.all([deriveTokenKey('k2'), deriveTokenKey('k1')])
    const token = await issueToken(previous, 'app-1', 60, NOW)
    expect(await checkToken(token, [current, previous], 'app-1', NOW)).toBe('valid')
    expect(await checkToken(token, [current], 'app-1', NOW)).toBe('invalid')
  })

  it('are refused after any change to the claims, even one that extends the expiry', async () => {
    const key = await deriveTokenKey('app-secret')
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
      expect(await checkToken(token, [await deriveTokenKey('s')], 'app-1', NOW)).toBe('invalid')
    })
  }

  it('do not derive their key as the secret itself', async () => {
    const token = await issueToken(await deriveTokenKey('app-secret'), 'app-1', 60, NOW)
    expect(token).not.toContain('app-secret')
  })
})
