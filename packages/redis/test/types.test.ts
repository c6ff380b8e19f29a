import {
  type ReleaseLock as ClientReleaseLock,
  type StoredToken as ClientStoredToken,
  createClient,
  type TokenStore,
} from '@hookguard/client'
import type { DedupeStore } from '@hookguard/core'
import { describe, expectTypeOf, it } from 'vitest'
import {
  type RedisClient,
  type RedisStoreError,
  type RedisTokenStore,
  type ReleaseLock,
  redisDedupeStore,
  redisTokenStore,
  type StoredToken,
} from '../src/index.ts'

describe('the public types', () => {
  it('gives a receiver’s DedupeStore and the API client’s TokenStore, with lock and invalidate', () => {
    expectTypeOf(redisDedupeStore).returns.toEqualTypeOf<DedupeStore>()
    expectTypeOf(redisTokenStore).returns.toEqualTypeOf<RedisTokenStore>()
    expectTypeOf<RedisTokenStore>().toExtend<Required<TokenStore>>()
    expectTypeOf<RedisTokenStore['lock']>().returns.resolves.toEqualTypeOf<(() => void | Promise<void>) | undefined>()
  })

  it('declares the API client’s token shapes itself, the same as the client’s, so that it needs no @hookguard/client to compile', () => {
    expectTypeOf<StoredToken>().toEqualTypeOf<ClientStoredToken>()
    expectTypeOf<ReleaseLock>().toEqualTypeOf<ClientReleaseLock>()
    const tokenStore = redisTokenStore({ sendCommand: async () => null })
    expectTypeOf(createClient).toBeCallableWith({ baseUrl: 'https://api.example.com', appId: 'a', appSecret: 'b', tokenStore })
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
