import type { Claim } from './dedupe-store.ts'

/** The first wait before a failed done mark is sent again, doubled each time up to {@link DONE_RETRY_MAX_MS}. */
const DONE_RETRY_FIRST_MS = 50
const DONE_RETRY_MAX_MS = 1_000

/**
 * Marks a delivery whose handler succeeded as done, and tries again after a failure for as long as
 * its claim holds (until `claimHolds`, a `Date.now()` time). While the claim stands no other run
 * starts, so a store that is back within `processingTtl` (Redis restarting, a cluster failing over)
 * still hears of the success, and a copy or a job's next run finds the delivery done instead of
 * running the handler a second time. Given up, the claim expires, and a retry runs the handler again.
 */
export async function markDone(claim: Claim, ttlMs: number, claimHolds: number): Promise<void> {
  for (let delay = DONE_RETRY_FIRST_MS; ; delay = Math.min(delay * 2, DONE_RETRY_MAX_MS)) {
    try {
      await claim.complete(ttlMs)
      return
    } catch (error) {
      // A TypeError is a mistake in the call (a TTL the store refuses): no retry changes it.
      if (error instanceof TypeError || Date.now() + delay >= claimHolds) throw error
    }
    // Unreferenced where the runtime can: a process shutting down does not wait minutes for a store that is away.
    await new Promise<void>((resolve) => (setTimeout(resolve, delay) as { unref?: () => void }).unref?.())
  }
}
