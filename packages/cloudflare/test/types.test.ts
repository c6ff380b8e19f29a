import type { DurableObjectNamespace, KVNamespace } from '@cloudflare/workers-types'
import type { DedupeStore } from '@hookguard/core'
import { describe, expectTypeOf, it } from 'vitest'
import type { DedupeNamespace, durableObjectDedupeStore, HookguardDedupe } from '../src/index.ts'

describe('the public types', () => {
  it('gives a receiver’s DedupeStore', () => {
    expectTypeOf<typeof durableObjectDedupeStore>().returns.toEqualTypeOf<DedupeStore>()
  })

  it('takes the binding as the Workers types give it, with or without the class named, and nothing else', () => {
    expectTypeOf<DurableObjectNamespace<HookguardDedupe>>().toExtend<DedupeNamespace>()
    expectTypeOf<DurableObjectNamespace>().toExtend<DedupeNamespace>()
    expectTypeOf<KVNamespace>().not.toExtend<DedupeNamespace>()
  })

  it('has the RPC methods the store calls, and an alarm', () => {
    expectTypeOf<HookguardDedupe['claim']>().parameters.toEqualTypeOf<[key: string, ttlMs: number, maxRows?: number]>()
    expectTypeOf<HookguardDedupe['complete']>().returns.toEqualTypeOf<Promise<void>>()
    expectTypeOf<HookguardDedupe['release']>().parameters.toEqualTypeOf<[key: string, token: string]>()
    expectTypeOf<HookguardDedupe['alarm']>().returns.toEqualTypeOf<Promise<void>>()
  })
})
