import type { TokenStore } from '@hookguard/client'
import type { DedupeStore } from '@hookguard/core'
import { describe, expectTypeOf, it } from 'vitest'
import { type RedisClient, type RedisStoreError, redisDedupeStore, redisTokenStore } from '../src/index.ts'

describe('the public types', () => {
  it('gives a receiver’s DedupeStore and the API client’s TokenStore, with lock and invalidate', () => {
    expectTypeOf(redisDedupeStore).returns.toEqualTypeOf<DedupeStore>()
    expectTypeOf(redisTokenStore).returns.toEqualTypeOf<TokenStore>()
    expectTypeOf<NonNullable<TokenStore['lock']>>().returns.resolves.toEqualTypeOf<(() => void | Promise<void>) | undefined>()
  })

  it('takes either library’s client or cluster client, and nothing without a raw-command method', () => {
    expectTypeOf<{ sendCommand(args: string[]): Promise<unknown> }>().toExtend<RedisClient>()
    expectTypeOf<{
      sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>
      getSlotMaster(slot: number): unknown
    }>().toExtend<RedisClient>()
    expectTypeOf<{ call(command: string, ...args: string[]): Promise<unknown> }>().toExtend<RedisClient>()
    expectTypeOf<{ get(key: string): Promise<string | null> }>().not.toExtend<RedisClient>()
  })

  it('has an error whose code is the receiver’s', () => {
    expectTypeOf<RedisStoreError['code']>().toEqualTypeOf<'store_unavailable'>()
    expectTypeOf<RedisStoreError['failure']>().toEqualTypeOf<'disconnected' | 'timeout' | 'error'>()
  })
})
