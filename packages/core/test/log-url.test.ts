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

  it('keeps parameters that only look alike', () => {
    expect(urlForLog('/w?access_token_hint=1&my_secret=2&secrets=3')).toBe('/w?access_token_hint=1&my_secret=2&secrets=3')
  })
})
