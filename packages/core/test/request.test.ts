import type { IncomingRequest } from '@hookguard/core'
import { readHeader } from '@hookguard/core/adapter'
import { describe, expect, it } from 'vitest'
import { toWebhookRequest } from '../src/request.ts'

describe('readHeader', () => {
  it("reads Node's rawHeaders whatever the case of either name, letters A to Z included", () => {
    expect(readHeader(['X-Zone-a', 'v'], 'x-zONE-A')).toBe('v')
    expect(readHeader(['x-zone-a', 'v'], 'X-ZONE-A')).toBe('v')
  })

  // Characters 0x20 apart that are not letters, as a bitwise case fold would take them for one another.
  it.each([
    ['@', '`'],
    ['[', '{'],
    ['\\', '|'],
    [']', '}'],
    ['^', '~'],
  ])('folds letters only: %s is not %s', (a, b) => {
    expect(readHeader([`x-${a}`, 'v'], `x-${b}`)).toBeNull()
    expect(readHeader([`x-${b}`, 'v'], `x-${a}`)).toBeNull()
  })

  it('folds no character outside ASCII: the Kelvin sign is not a k', () => {
    // `toLowerCase()` maps U+212A to 'k'; HTTP names are ASCII tokens, compared without Unicode case.
    expect(readHeader(['\u212a-id', 'v'], 'k-id')).toBeNull()
  })

  it('reads no header whose name only begins or ends like the one asked for', () => {
    expect(readHeader(['x-i', 'v'], 'x-id')).toBeNull()
    expect(readHeader(['x-idx', 'v'], 'x-id')).toBeNull()
  })

  it('joins the lines of a repeated header, whatever their case', () => {
    expect(readHeader(['X-Id', 'a', 'x-id', 'b', 'X-ID', 'c'], 'x-id')).toBe('a, b, c')
    expect(readHeader(['X-Id', 'a', 'x-id', 'b', 'X-ID', 'c'], 'X-Id')).toBe('a, b, c')
  })

  it('reads names in any case after a resolver has asked for a hundred others', () => {
    // The lower-case forms of the names asked for are kept for a bounded number of names only.
    for (let i = 0; i < 100; i++) expect(readHeader(['x-other', 'v'], `X-Asked-${i}`)).toBeNull()
    for (const name of ['X-Late-Name', 'x-late-name', 'X-LATE-NAME']) {
      expect(readHeader(['x-late-name', 'a', 'X-Late-Name', 'b', 'X-LATE-NAME', 'c'], name)).toBe('a, b, c')
      expect(readHeader(['\u212a-late', 'v'], 'k-late')).toBeNull()
    }
  })
})

describe('the URL a resolver reads', () => {
  const urlOf = (origin: IncomingRequest['origin']) =>
    toWebhookRequest({ method: 'POST', url: '/hooks?tenant=a', origin, headers: {}, body: undefined }).url.href

  it('asks an adapter for the origin only when the URL is read, and once', () => {
    let asked = 0
    const origin = () => {
      asked++
      return 'https://tenant-a.example.com'
    }
    const view = toWebhookRequest({ method: 'POST', url: '/hooks?tenant=a', origin, headers: {}, body: undefined })
    expect(view.header('host')).toBeNull()
    expect(asked).toBe(0)
    expect([view.url.href, view.url.href]).toEqual([
      'https://tenant-a.example.com/hooks?tenant=a',
      'https://tenant-a.example.com/hooks?tenant=a',
    ])
    expect(asked).toBe(1)
  })

  it('takes an origin given as a string as it is', () => {
    expect(urlOf('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080/hooks?tenant=a')
  })

  it('falls back to the path alone when the adapter cannot tell the origin, or it is no URL', () => {
    const failing = () => {
      throw new Error('no host')
    }
    for (const origin of [undefined, () => undefined, failing, 'not a url', () => 'not a url']) {
      expect(urlOf(origin)).toBe('http://localhost/hooks?tenant=a')
    }
  })
})
