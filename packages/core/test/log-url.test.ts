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

  it('keeps parameters that only look alike', () => {
    expect(urlForLog('/w?access_token_hint=1&my_secret=2&secrets=3')).toBe('/w?access_token_hint=1&my_secret=2&secrets=3')
  })

  it('writes no credential, whatever the case of its name and whatever mark puts it in the URL', () => {
    const VALUE = 'CREDENTIAL-VALUE'
    // Path and query text of the characters an address is written with, the value's excepted.
    const text = fc.stringMatching(/^[a-z0-9/_.=&;%-]{0,12}$/)
    const name = fc
      .constantFrom('access_token', 'secret', 'client_secret', 'acc%65ss_token')
      .chain((base) =>
        fc
          .array(fc.boolean(), { minLength: base.length, maxLength: base.length })
          .map((upper) => [...base].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('')),
      )
    const mark = fc.constantFrom('?', ';', '%3F', '%3f', '#', '?x=1&', '?x=1;', '?&', '%3Fx=1&')
    fc.assert(
      fc.property(text, name, mark, text, (before, key, at, after) => {
        expect(urlForLog(`/${before}${at}${key}=${VALUE}${after.replace(/^[^&;]*/, '')}`)).not.toContain(VALUE)
      }),
    )
  })
})
