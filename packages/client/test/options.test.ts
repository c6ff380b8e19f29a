import { describe, expect, expectTypeOf, it } from 'vitest'
import { type Client, type ClientOptions, createClient, DEFAULT_REFRESH_AHEAD } from '../src/index.ts'

const valid: ClientOptions = { baseUrl: 'https://api.example.com', appId: 'app', appSecret: 'secret' }

describe('createClient options', () => {
  it('refreshes 300 seconds ahead by default', () => {
    expect(DEFAULT_REFRESH_AHEAD).toBe(300)
  })

  it('makes no request when it is created', () => {
    let calls = 0
    createClient({
      ...valid,
      fetch: async () => {
        calls++
        return new Response()
      },
    })
    expect(calls).toBe(0)
  })

  describe('are checked when the client is created', () => {
    for (const [label, options] of [
      ['no options', undefined],
      ['no baseUrl', { ...valid, baseUrl: undefined }],
      ['a relative baseUrl', { ...valid, baseUrl: '/api' }],
      ['a baseUrl that is not http', { ...valid, baseUrl: 'ftp://api.example.com' }],
      ['a baseUrl with a query', { ...valid, baseUrl: 'https://api.example.com/?x=1' }],
      ['a baseUrl with credentials', { ...valid, baseUrl: 'https://u:p@api.example.com' }],
      ['no appId', { ...valid, appId: '' }],
      ['an appId with a colon', { ...valid, appId: 'a:b' }],
      ['no appSecret', { ...valid, appSecret: undefined }],
      ['a fetch that is not a function', { ...valid, fetch: 'fetch' }],
      ['a tokenStore without set', { ...valid, tokenStore: { get: () => undefined } }],
      ['a tokenStore whose lock is not a function', { ...valid, tokenStore: { get: () => undefined, set: () => {}, lock: true } }],
      [
        'a tokenStore whose invalidate is not a function',
        { ...valid, tokenStore: { get: () => undefined, set: () => {}, invalidate: 'yes' } },
      ],
      ['a negative refreshAhead', { ...valid, refreshAhead: -1 }],
      ['a refreshAhead that is not a number', { ...valid, refreshAhead: '300' }],
      ['a clock that is not a function', { ...valid, clock: 0 }],
    ] as const) {
      it(`throws a TypeError naming the package for ${label}`, () => {
        expect(() => createClient(options as unknown as ClientOptions)).toThrow(TypeError)
        expect(() => createClient(options as unknown as ClientOptions)).toThrow(/^@hookguard\/client: /)
      })
    }

    it('never puts the secret in the message', () => {
      expect(() => createClient({ ...valid, appId: 'a:b', appSecret: 'hunter2' })).toThrow(
        expect.objectContaining({ message: expect.not.stringContaining('hunter2') }),
      )
    })

    it("leaves the caller's options object as it was", () => {
      const options = { ...valid }
      createClient(options)
      expect(options).toEqual(valid)
    })
  })

  it('has public types that hold', () => {
    expectTypeOf(createClient).returns.toEqualTypeOf<Client>()
    expectTypeOf<Client['token']>().returns.resolves.toBeString()
    // @ts-expect-error appSecret is required
    expectTypeOf(createClient).toBeCallableWith({ baseUrl: 'https://api.example.com', appId: 'app' })
    // @ts-expect-error a query value cannot be an object
    expectTypeOf<Client['customers']['query']>().toBeCallableWith({ mobile: '1', page: { n: 1 } })
  })
})
