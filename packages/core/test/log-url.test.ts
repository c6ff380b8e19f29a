import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { urlForLog } from '../src/log-url.ts'

describe('urlForLog', () => {
  it('leaves a URL without a query as it is', () => {
    expect(urlForLog('/webhooks')).toBe('/webhooks')
  })

  it('leaves out the access token of an OAuth delivery and keeps the other parameters byte for byte', () => {
    expect(urlForLog('/webhooks?tenant=a%20b&access_token=eyJhbGci.x.y&x=1+2')).toBe('/webhooks?tenant=a%20b&x=1+2')
  })

  it('leaves out the secret of the service and of OAuth clients at the token address', () => {
    expect(urlForLog('/token?appid=app&secret=s3cret&grant_type=client_credentials')).toBe('/token?appid=app&grant_type=client_credentials')
    expect(urlForLog('/token?client_id=app&client_secret=s3cret')).toBe('/token?client_id=app')
  })

  it('drops the query mark when nothing else is left', () => {
    expect(urlForLog('/webhooks?access_token=t')).toBe('/webhooks')
  })

  it('leaves out every copy, and a name the receiver would decode to a credential', () => {
    expect(urlForLog('/w?access_token=a&access_token=b&acc%65ss_token=c&secret&ok')).toBe('/w?ok')
  })

  it('leaves out a credential whose name is written in any case', () => {
    expect(urlForLog('/w?ACCESS_TOKEN=a&Secret=b&Client_Secret=c&acc%45ss_token=d&Tenant=x')).toBe('/w?Tenant=x')
  })

  it('splits the query at ; as well, and keeps the separators of the fields it keeps', () => {
    expect(urlForLog('/w?tenant=a;access_token=t&x=1;y=2')).toBe('/w?tenant=a&x=1;y=2')
    expect(urlForLog('/w?secret=s;tenant=a')).toBe('/w?tenant=a')
    expect(urlForLog('/w?&&x=1')).toBe('/w?&&x=1')
  })

  it('cuts the path at an escaped query mark, in either case, the mark kept', () => {
    expect(urlForLog('/webhook%3Faccess_token=t')).toBe('/webhook%3F')
    expect(urlForLog('/webhook%3faccess_token=t&tenant=acme')).toBe('/webhook%3f')
    expect(urlForLog('/webhook%3Ftenant%3Dacme%26access_token%3Dt')).toBe('/webhook%3F')
  })

  it('cuts the path at a ;, the mark kept, and still reads the query after it', () => {
    expect(urlForLog('/webhook;access_token=t')).toBe('/webhook;')
    expect(urlForLog('/token;secret=s?appid=app&secret=s')).toBe('/token;?appid=app')
    expect(urlForLog('/a%3Fb;c?secret=s')).toBe('/a%3F')
  })

  it('leaves out the fragment, which no client sends', () => {
    expect(urlForLog('/webhook#access_token=t')).toBe('/webhook')
    expect(urlForLog('/webhook?tenant=a#&access_token=t')).toBe('/webhook?tenant=a')
    expect(urlForLog('/webhook#x?secret=s')).toBe('/webhook')
  })

  it('keeps an escape that is not a query mark, and a malformed one, as it is', () => {
    expect(urlForLog('/a%2Fb%3D%zz%?tenant=a%20b')).toBe('/a%2Fb%3D%zz%?tenant=a%20b')
    expect(urlForLog('/webhooks%zz?access_token=t')).toBe('/webhooks%zz')
  })

  it('leaves out every field whose name contains a credential name, and keeps the ones that only look alike', () => {
    expect(urlForLog('/w?access_token_hint=1&my_secret=2&secrets=3&token=4&access=5&secre=6')).toBe('/w?token=4&access=5&secre=6')
  })

  it('splits the query at a second ? as well: a webhook address with a query of its own, the token appended after a ?', () => {
    expect(urlForLog('/webhooks?tenant=1?access_token=T')).toBe('/webhooks?tenant=1')
    expect(urlForLog('/webhook?tenant=1?access_token=T')).toBe('/webhook?tenant=1')
    expect(urlForLog('/token?appid=a?secret=S?grant_type=client_credentials')).toBe('/token?appid=a?grant_type=client_credentials')
    expect(urlForLog('/w?tenant=a%20b?x=1+2;y&&z')).toBe('/w?tenant=a%20b?x=1+2;y&&z')
  })

  it('reads a name decorated with spaces, brackets or an escaped =, as decoded, in any case', () => {
    for (const field of [
      '+access_token=T',
      'access_token+=T',
      'access_token%20=T',
      '%20access_token=T',
      'access_token%3DT',
      'access_token%3dT',
      'access_token[]=T',
      'access_token%5B%5D=T',
      'client_secret%3DS',
      'Client_Secret%3DS',
      '%41CCESS_TOKEN=T',
      'acc%2565ss_token=T',
      'acc%252565ss_token=T',
      '%2520secret=S',
    ]) {
      expect(urlForLog(`/webhooks?${field}`), field).toBe('/webhooks')
      expect(urlForLog(`/webhooks?tenant=1&${field}&x=2`), field).toBe('/webhooks?tenant=1&x=2')
      expect(urlForLog(`/webhook?tenant=1?${field}`), field).toBe('/webhook?tenant=1')
    }
  })

  it('leaves out a field whose value carries a credential field, escaped once or twice', () => {
    expect(urlForLog('/w?next=%2Fcb%3Faccess_token%3DT&tenant=a')).toBe('/w?tenant=a')
    expect(urlForLog('/w?x=a%2526SECRET%253DS;tenant=a')).toBe('/w?tenant=a')
    expect(urlForLog('/w?x=1+access_token[]=T')).toBe('/w')
    expect(urlForLog('/w?x=access_token&y=secret')).toBe('/w?x=access_token&y=secret')
  })

  it('cuts the path at an escaped ; and at an escaped %, in either case, the mark kept', () => {
    expect(urlForLog('/webhook%3Baccess_token=T')).toBe('/webhook%3B')
    expect(urlForLog('/webhook%3baccess_token=T&tenant=1')).toBe('/webhook%3b')
    expect(urlForLog('/webhook%253Faccess_token=T')).toBe('/webhook%25')
    expect(urlForLog('/webhook%253faccess_token=T?tenant=1')).toBe('/webhook%25?tenant=1')
  })

  it('cuts the path before the first segment that names a credential, whatever takes the place of the ?', () => {
    expect(urlForLog('/webhooks/access_token=T')).toBe('/webhooks/')
    expect(urlForLog('/webhooks:access_token=T')).toBe('/')
    expect(urlForLog('/token/x:SECRET=S?appid=a')).toBe('/token/?appid=a')
    expect(urlForLog('/webhooks/acc%65ss_token/x')).toBe('/webhooks/')
    expect(urlForLog('/x/secret;y')).toBe('/x/')
    expect(urlForLog('/x;y/secret')).toBe('/x;')
    expect(urlForLog('/webhooks/token')).toBe('/webhooks/token')
  })

  it('writes no credential, whatever the case and decoration of its name and whatever mark puts it in the URL', () => {
    const VALUE = 'CREDENTIAL-VALUE'
    // Path and query text of the characters an address is written with, the value's excepted.
    const text = fc.stringMatching(/^[a-z0-9/_.=&;%-]{0,12}$/)
    // Each letter in either case, written as it is, escaped, or escaped twice.
    const letter = (c: string) =>
      fc.tuple(fc.boolean(), fc.constantFrom('', '%', '%25')).map(([upper, percent]) => {
        const cased = upper ? c.toUpperCase() : c
        return percent === '' ? cased : `${percent}${cased.charCodeAt(0).toString(16).toUpperCase()}`
      })
    const name = fc
      .constantFrom('access_token', 'secret', 'client_secret')
      .chain((base) => fc.tuple(...[...base].map(letter)).map((letters) => letters.join('')))
    const before = fc.constantFrom('', '+', '%20', '%2520', '+%20')
    const after = fc.constantFrom('', '+', '%20', '[]', '%5B%5D', '+[]')
    const equals = fc.constantFrom('=', '%3D', '%3d', '%253D')
    const mark = fc.constantFrom(
      '?',
      ';',
      '%3F',
      '%3f',
      '%3B',
      '%3b',
      '%253F',
      '%253f',
      '/',
      ':',
      '#',
      '?x=1&',
      '?x=1;',
      '?x=1?',
      '?&',
      '%3Fx=1&',
      '?x=1%26',
      '?x=1%3F',
      '?x=%2526',
    )
    const decoded = (url: string) =>
      [1, 2, 3].reduce((s) => s.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))), url)
    fc.assert(
      fc.property(text, mark, before, name, after, equals, text, (start, at, pre, key, post, is, rest) => {
        const url = `/${start}${at}${pre}${key}${post}${is}${VALUE}${rest.replace(/^[^&;]*/, '')}`
        expect(decoded(urlForLog(url)), url).not.toContain(VALUE)
      }),
      { numRuns: 2000 },
    )
  })
})
