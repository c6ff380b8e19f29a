/**
 * How much of the inspector's time the diagnoses of refused deliveries may take.
 *
 * A diagnosis tries every variant: an HMAC per secret for each, the Gson and Unicode forms made,
 * the body parsed and written again. That is tens of HMACs over the body for an ordinary delivery
 * and hundreds for one built of small JSON values, and the sender, who needs no secret to be
 * refused, picks the body. Without a bound, a sender that never stops would pick how busy the
 * inspector is. The time diagnoses take is counted against an allowance that refills with the
 * clock; a refused delivery that finds it spent is recorded with its verdict, its diagnosis
 * `skipped`. A person sending deliveries by hand never meets the bound.
 */

/** The share of one core that diagnoses may take over time. */
const DIAGNOSIS_SHARE = 0.25
/** The most they may take at once, after a quiet while. */
const DIAGNOSIS_BURST_MS = 1_000

export interface DiagnosisBudgetOptions {
  share?: number
  burstMs?: number
  /** Milliseconds, increasing. */
  now?: () => number
}

export interface DiagnosisBudget {
  /**
   * Runs `diagnose` when the allowance is not spent, counting its time; `undefined` when it is.
   * `diagnose` is given `spent`, true once the allowance is used up meanwhile: one diagnosis may
   * try many secrets, and stops part-way rather than take more than the allowance.
   */
  run<T>(diagnose: (spent: () => boolean) => Promise<T>): Promise<T | undefined>
}

export function createDiagnosisBudget({
  share = DIAGNOSIS_SHARE,
  burstMs = DIAGNOSIS_BURST_MS,
  now = () => performance.now(),
}: DiagnosisBudgetOptions = {}): DiagnosisBudget {
  let available = burstMs
  let at = now()
  const refill = (time: number) => {
    available = Math.min(burstMs, available + (time - at) * share)
    at = time
  }
  return {
    async run(diagnose) {
      let last = now()
      refill(last)
      if (available <= 0) return undefined
      // Wall time, which is at least the CPU time the diagnosis took: the count errs toward less.
      // Charged as it goes, so that diagnoses running side by side each see what the others took.
      const charge = () => {
        const time = now()
        available -= time - last
        last = time
        refill(time)
      }
      try {
        return await diagnose(() => {
          charge()
          return available <= 0
        })
      } finally {
        charge()
      }
    },
  }
}
