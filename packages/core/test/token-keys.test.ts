import { afterEach, describe, expect, it, vi } from 'vitest'
import { TokenKeys } from '../src/token-keys.ts'

const NOW = Date.UTC(2026, 0, 1)

afterEach(() => {
  vi.restoreAllMocks()
})

describe('TokenKeys', () => {
  it('warns once at setup about key material short enough to guess, without printing it', async () => {
    // Once a process: the module is loaded afresh, as a process would load it.
    vi.resetModules()
    const { TokenKeys: Fresh } = await import('../src/token-keys.ts')
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    new Fresh({ mode: 'oauth2', appId: 'app-1', secret: 'short-secret' })
    new Fresh({ mode: 'oauth2', appId: 'app-2', secret: 'also-short' })
    expect(warn).toHaveBeenCalledTimes(1)
    const message = String(warn.mock.calls[0]?.[0])
    expect(message).toMatch(/^@hookguard\/core: /)
    expect(message).not.toContain('short-secret')
    expect(message).not.toContain('also-short')
  })

  it('warns about key material under 16 characters, in any tokenKeys entry, and not about 16 or more', async () => {
    const fresh = async () => {
      vi.resetModules()
      return (await import('../src/token-keys.ts')).TokenKeys
    }
    const base = { mode: 'oauth2', appId: 'app-1', secret: 'client-secret-of-some-length' } as const
    const cases: [readonly string[], number][] = [
      [['x'.repeat(16)], 0],
      [['x'.repeat(15)], 1],
      [['x'.repeat(40), 'x'.repeat(15)], 1],
    ]
    for (const [tokenKeys, warnings] of cases) {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
      ;new (await fresh())({ ...base, tokenKeys })
      expect(warn).toHaveBeenCalledTimes(warnings)
      warn.mockRestore()
    }
  })

  it('issues with the first tokenKeys entry and accepts tokens of every entry (rotation)', async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    const base = { mode: 'oauth2', appId: 'app-1', secret: 'client-secret-of-some-length' } as const
    const old = await new TokenKeys({ ...base, tokenKeys: ['key-material-one-0123456789'] }).issue(NOW)
    const rotated = new TokenKeys({ ...base, tokenKeys: ['key-material-two-0123456789', 'key-material-one-0123456789'] })
    expect(await rotated.check(old, NOW)).toBe('valid')
    expect(await new TokenKeys({ ...base, tokenKeys: ['key-material-two-0123456789'] }).check(old, NOW)).toBe('invalid')
    expect(await rotated.check(await rotated.issue(NOW), NOW)).toBe('valid')
  })

  it('follows tokenTtl, 7200 s by default', async () => {
    const base = { mode: 'oauth2', appId: 'app-1', secret: 'client-secret-of-some-length' } as const
    const keys = new TokenKeys(base)
    expect(keys.ttl).toBe(7200)
    const token = await keys.issue(NOW)
    expect(await keys.check(token, NOW + 7199_000)).toBe('valid')
    expect(await keys.check(token, NOW + 7200_000)).toBe('expired')
    expect(new TokenKeys({ ...base, tokenTtl: 60 }).ttl).toBe(60)
  })
})
