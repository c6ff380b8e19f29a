import { basicChallenge, formatBasicAuthorization, parseBasicAuthorization } from '@hookguard/core/adapter'
import fixtures from '@hookguard/testkit/signatures.json' with { type: 'json' }
import { describe, expect, it } from 'vitest'

describe('parseBasicAuthorization', () => {
  describe("with the service's own headers", () => {
    for (const { username, password, header } of fixtures.basic.cases) {
      it(`reads ${JSON.stringify(username)} and its password`, () => {
        expect(parseBasicAuthorization(header)).toEqual({ username, password })
      })
    }
  })

  it('accepts the scheme in any case (RFC 7235 §2.1)', () => {
    for (const scheme of ['basic', 'BASIC', 'bAsIc']) {
      expect(parseBasicAuthorization(`${scheme} dTpw`)).toEqual({ username: 'u', password: 'p' })
    }
  })

  it('splits at the first colon, so a password may contain colons', () => {
    expect(parseBasicAuthorization(`Basic ${btoa('user:pa:ss')}`)).toEqual({ username: 'user', password: 'pa:ss' })
  })

  it("answers 'missing' for no header or another scheme", () => {
    expect(parseBasicAuthorization(undefined)).toBe('missing')
    expect(parseBasicAuthorization('')).toBe('missing')
    expect(parseBasicAuthorization('Bearer abc')).toBe('missing')
  })

  it("answers 'missing' for a scheme that merely starts or ends with Basic", () => {
    for (const header of ['Basics dTpw', 'xBasic dTpw', 'BasicAuth dTpw', 'NotBasic dTpw']) {
      expect(parseBasicAuthorization(header)).toBe('missing')
    }
  })

  it('allows spaces around the header and between the scheme and the credentials', () => {
    expect(parseBasicAuthorization('  Basic dTpw  ')).toEqual({ username: 'u', password: 'p' })
    expect(parseBasicAuthorization('Basic   dTpw')).toEqual({ username: 'u', password: 'p' })
  })

  for (const [label, header] of [
    ['bad base64', 'Basic !!!!'],
    ['no colon', `Basic ${btoa('nocolon')}`],
    ['bytes that are not UTF-8', `Basic ${btoa('\xff\xfe:\xff')}`],
    ['no credentials after the scheme', 'Basic'],
  ] as const) {
    it(`answers 'malformed' for ${label}`, () => {
      expect(parseBasicAuthorization(header)).toBe('malformed')
    })
  }
})

describe('formatBasicAuthorization', () => {
  it("builds the service's header from UTF-8 credentials", () => {
    for (const { username, password, header } of fixtures.basic.cases) {
      expect(formatBasicAuthorization(username, password)).toBe(header)
    }
  })

  it('refuses a username with a colon, which RFC 7617 forbids', () => {
    expect(() => formatBasicAuthorization('a:b', 'p')).toThrow(/^@hookguard\/core: /)
  })
})

describe('basicChallenge', () => {
  it('names the realm and the UTF-8 charset (RFC 7617 §2.1)', () => {
    expect(basicChallenge('hooks')).toBe('Basic realm="hooks", charset="UTF-8"')
  })

  it('escapes quotes in the realm', () => {
    expect(basicChallenge('a"b')).toBe('Basic realm="a\\"b", charset="UTF-8"')
  })
})
