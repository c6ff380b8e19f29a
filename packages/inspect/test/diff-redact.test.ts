import { describe, expect, it } from 'vitest'
import { diffBytes } from '../src/diff.ts'
import { presentedToken, redactCredentials, redactHeader, redactUrl } from '../src/redact.ts'

const text = (value: string) => new TextEncoder().encode(value)

describe('diffBytes', () => {
  it('marks the bytes between the common start and end', () => {
    const { a, b, same } = diffBytes(text('{"q":"a=b"}'), text('{"q":"a\\u003db"}'))
    expect(same).toBe(false)
    expect(a).toEqual([
      { text: '{"q":"a', changed: false },
      { text: '=', changed: true },
      { text: 'b"}', changed: false },
    ])
    expect(b.find((s) => s.changed)?.text).toBe('\\u003d')
  })

  it('never cuts a UTF-8 character in two', () => {
    const { a, b } = diffBytes(text('"東"'), text('"京"'))
    expect(a.find((s) => s.changed)?.text).toBe('東')
    expect(b.find((s) => s.changed)?.text).toBe('京')
  })

  it('says when the bytes are the same', () => {
    expect(diffBytes(text('x'), text('x')).same).toBe(true)
  })
})

describe('redaction', () => {
  it('replaces credentials in a query, in any case and escaped', () => {
    expect(redactUrl('/hooks?access_token=abc&x=1')).toBe('/hooks?access_token=[redacted]&x=1')
    expect(redactUrl('/token?appid=a&secret=s3&grant_type=client_credentials')).toBe(
      '/token?appid=a&secret=[redacted]&grant_type=client_credentials',
    )
    expect(redactUrl('/h?ACCESS%5FTOKEN=abc')).toBe('/h?ACCESS%5FTOKEN=[redacted]')
  })

  it('keeps the scheme and the Basic user name of Authorization, never the rest', () => {
    const basic = `Basic ${Buffer.from('hook-user:pw').toString('base64')}`
    expect(redactHeader('Authorization', basic)).toBe('Basic [redacted] (user "hook-user")')
    expect(redactHeader('authorization', 'Bearer abc.def')).toBe('Bearer [redacted]')
    expect(redactHeader('X-Other', 'v')).toBe('v')
  })

  it('replaces token fields of JSON and forms', () => {
    expect(redactCredentials('{"access_token":"t0k","expires_in":7200}')).toBe('{"access_token":"[redacted]","expires_in":7200}')
    expect(redactCredentials('appid=a&secret=s&client_secret=c')).toBe('appid=a&secret=[redacted]&client_secret=[redacted]')
  })

  it('finds the token a delivery presents, wherever it travels', () => {
    expect(presentedToken('/h?access_token=q', [], new Uint8Array())).toBe('q')
    expect(presentedToken('/h', [['Authorization', 'Bearer b']], new Uint8Array())).toBe('b')
    expect(
      presentedToken('/h', [['content-type', 'application/x-www-form-urlencoded']], new TextEncoder().encode('a=1&access_token=f')),
    ).toBe('f')
  })
})
