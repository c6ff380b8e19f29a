/**
 * A dedupe store whose claims a test changes: each claim the store grants is passed through `wrap`
 * with its key, to fail, delay or record its `complete` and `release`, while the store itself
 * works as it does. The types are the core's `DedupeStore` and `Claim` by shape, so the kit needs
 * no build of the core.
 */
export interface WrappedClaim {
  complete(ttlMs?: number): Promise<void>
  release(): Promise<void>
}

type Found = { state: 'claimed'; claim: WrappedClaim } | { state: 'processing'; retryAfterMs: number } | { state: 'done' }

export interface ClaimingStore {
  claim(key: string, ttlMs: number): Promise<Found>
}

export function wrappingClaims(store: ClaimingStore, wrap: (claim: WrappedClaim, key: string) => WrappedClaim): ClaimingStore {
  return {
    async claim(key, ttlMs) {
      const found = await store.claim(key, ttlMs)
      return found.state === 'claimed' ? { state: 'claimed', claim: wrap(found.claim, key) } : found
    },
  }
}
