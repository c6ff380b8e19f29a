import { describe, expect, expectTypeOf, it } from 'vitest'
import type { DeliverOptions, DeliveryResult, MockService, MockServiceOptions, TokenAnswer } from '../src/index.ts'
import * as emulator from '../src/index.ts'

describe('@hookguard/emulator', () => {
  it('exports the library by name, and nothing of the command line', () => {
    expect(Object.keys(emulator).sort()).toEqual(
      ['EmulatorError', 'SAMPLE_EVENT_NAMES', 'deliver', 'mockService', 'requestToken', 'sampleEvent', 'serialize'].sort(),
    )
  })

  it('types deliver as a union on mode, each mode with its own credentials', () => {
    expectTypeOf(emulator.deliver).parameter(0).toEqualTypeOf<DeliverOptions>()
    expectTypeOf(emulator.deliver).returns.resolves.toEqualTypeOf<DeliveryResult>()
    expectTypeOf<Extract<DeliverOptions, { mode: 'secret' }>>().toHaveProperty('secret').toEqualTypeOf<string>()
    expectTypeOf<Extract<DeliverOptions, { mode: 'oauth2' }>>().toHaveProperty('appSecret').toEqualTypeOf<string>()
    const url = 'http://127.0.0.1:3000/hooks'
    // @ts-expect-error: mode 'secret' needs a secret
    const noSecret: DeliverOptions = { url, mode: 'secret', payload: {} }
    // @ts-expect-error: Basic credentials do not belong to mode 'secret'
    const mixed: DeliverOptions = { url, mode: 'secret', secret: 's', username: 'u', payload: {} }
    // @ts-expect-error: mode 'oauth2' needs tokenUrl, appId and appSecret
    const noToken: DeliverOptions = { url, mode: 'oauth2', appId: 'a', payload: {} }
    expect([noSecret, mixed, noToken].map((o) => o.mode)).toEqual(['secret', 'secret', 'oauth2'])
  })

  it("types the token answer and re-exports mockService's types", () => {
    expectTypeOf<TokenAnswer['access_token']>().toEqualTypeOf<string>()
    expectTypeOf(emulator.mockService).parameter(0).toEqualTypeOf<MockServiceOptions>()
    expectTypeOf(emulator.mockService).returns.resolves.toEqualTypeOf<MockService>()
    expect(typeof emulator.mockService).toBe('function')
  })
})
