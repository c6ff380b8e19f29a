import { type ClaimAnswer, type ClaimRow, type ClaimRows, claimRow, completeRow, releaseRow } from '../src/claims.ts'
import type { DedupeNamespace } from '../src/store.ts'

/**
 * A Durable Object namespace in process: one object per name, each a `Map` of rows run by the
 * same claim rules as `HookguardDedupe`, on a clock of the test's. `fail(name, …errors)` makes the
 * next calls to that object reject with those errors, in turn, as a reset or overloaded object would.
 */
export function fakeNamespace(clock: () => number = Date.now) {
  const objects = new Map<string, Map<string, ClaimRow>>()
  const faults = new Map<string, unknown[]>()
  const calls: { name: string; method: string }[] = []
  let stubs = 0
  let tokens = 0

  const rowsOf = (name: string) => {
    const rows = objects.get(name) ?? new Map<string, ClaimRow>()
    objects.set(name, rows)
    return rows
  }
  const run = async <T>(name: string, method: string, work: () => T): Promise<T> => {
    calls.push({ name, method })
    // An RPC is a round trip: the answer comes later, whatever the object did.
    await Promise.resolve()
    const fault = faults.get(name)?.shift()
    if (fault !== undefined) throw fault
    return work()
  }

  const namespace: DedupeNamespace = {
    idFromName: (name: string) => ({ name }),
    get(id: never) {
      stubs++
      const { name } = id as { name: string }
      const map = rowsOf(name)
      const rows: ClaimRows = {
        get: (key) => map.get(key),
        put: (key, row) => void map.set(key, row),
        delete: (key) => void map.delete(key),
      }
      return {
        claim: (key: string, ttlMs: number): Promise<ClaimAnswer> =>
          run(name, 'claim', () => claimRow(rows, key, ttlMs, clock(), `token-${++tokens}`)),
        complete: (key: string, ttlMs: number) => run(name, 'complete', () => void completeRow(rows, key, ttlMs, clock())),
        release: (key: string, token: string) => run(name, 'release', () => releaseRow(rows, key, token)),
      }
    },
  }
  return {
    namespace,
    objects,
    calls,
    stubs: () => stubs,
    fail(name: string, ...errors: unknown[]) {
      faults.set(name, [...(faults.get(name) ?? []), ...errors])
    },
  }
}

/** An error as the Workers runtime gives a call to an object that was reset under it. */
export function resetError(): Error {
  return Object.assign(new Error('Durable Object reset because its code was updated.'), { durableObjectReset: true })
}
