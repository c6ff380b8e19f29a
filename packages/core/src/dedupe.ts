import { backend } from '#crypto'
import { toHex } from './bytes.ts'
import type { Claim, ClaimResult, DedupeStore } from './dedupe-store.ts'
import { memoryDedupeStore } from './dedupe-store.ts'
import type { WebhookDelivery } from './delivery.ts'
import { markDone } from './done-mark.ts'
import { WebhookError } from './errors.ts'
import type { WebhookRequest } from './request.ts'
import { jsonResponse, type WebhookResponse } from './response.ts'

/** The `dedupe` option: process each delivery (each fingerprint) once. */
export interface DedupeOptions {
  /** Where fingerprints are claimed. Default: a bounded in-memory store, which dedupes within one process only. */
  store?: DedupeStore
  /**
   * Seconds a handled delivery is remembered: a duplicate within it is answered without running
   * the handler. It must cover the service's retry period. Default 86 400 (a day).
   */
  ttl?: number
  /**
   * Seconds a delivery being handled holds its claim: a duplicate meanwhile is answered 409 with
   * `Retry-After` as long as the claim has been held (1 s at least, never past its expiry); a
   * process that dies while handling loses the claim after it. Default 300.
   */
  processingTtl?: number
  /**
   * Milliseconds to wait for the store's `claim` before answering 503 `store_unavailable` (with
   * `Retry-After`), so that a store that never answers never holds the sender's connection. A claim
   * that arrives later is released: no handler runs for it. Default 5000.
   */
  claimTimeout?: number
  /** Status of the answer to a duplicate of a handled delivery. Default 200: the service stops retrying. */
  duplicateStatus?: number
  /**
   * The key a delivery is claimed under. Default: its `fingerprint`, scoped by who sent it (the
   * secrets it was checked against, the Basic credentials, the OAuth app; in mode `none` the
   * address's path), so that two addresses or tenants sharing one store never collide. Give your
   * own to scope otherwise (`(req, delivery) => \`${tenantOf(req)}:${delivery.fingerprint}\``), or to
   * use an id of the payload's own. It runs after verification, for genuine deliveries only.
   * A key longer than {@link MAX_STORED_KEY_LENGTH} characters, or not well-formed Unicode (a lone
   * surrogate, which JSON allows in a payload's id), is claimed as the SHA-256 of its UTF-16 code
   * units: every store takes it, and two such keys never become one.
   */
  key?: (req: WebhookRequest, delivery: WebhookDelivery) => string | Promise<string>
}

export const DEFAULT_DEDUPE_TTL = 86_400
export const DEFAULT_PROCESSING_TTL = 300
export const DEFAULT_CLAIM_TIMEOUT = 5_000
/**
 * The longest key given to a store as it is. Stores differ in what they take (a Durable Object's
 * key is bounded, and a Redis client encodes a lone surrogate as U+FFFD, so that two keys become
 * one, or one routes to a cluster slot the server does not own): past this, or when not
 * well-formed, a key is hashed first.
 */
export const MAX_STORED_KEY_LENGTH = 512
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** What the receiver does with a verified delivery's fingerprint. */
export type DedupeVerdict =
  | { kind: 'claimed'; settle?: (handled: boolean) => Promise<void> }
  | { kind: 'processing'; error: WebhookError }
  | { kind: 'done'; response: WebhookResponse }

/** Claims a verified delivery; `scopedKey` is the default key, made only when no `key` option is given. */
export type Dedupe = (req: WebhookRequest, delivery: WebhookDelivery, scopedKey: () => Promise<string>) => Promise<DedupeVerdict>

/** Nothing to remember: every delivery runs the handler, and the adapter has nothing to settle. */
const NO_CLAIM: DedupeVerdict = { kind: 'claimed' }
export const noDedupe: Dedupe = async () => NO_CLAIM

/**
 * Claims each fingerprint before the handler runs. A store that fails, or does not answer within
 * `claimTimeout`, is answered 503 `store_unavailable`, never a second run; a claim that cannot be settled afterwards expires after
 * `processingTtl`, and is reported on the console.
 */
export function createDedupe(options: DedupeOptions, packageName: string): Dedupe {
  const claimer = createClaimer(options, packageName)
  return async (req, delivery, scopedKey) => {
    const key = await storedKey(options.key, req, delivery, scopedKey, packageName)
    // Read before the claim is asked for, so the claim lasts at least until then.
    const claimHolds = Date.now() + claimer.processingMs
    const found = await claimer.claim(key, delivery.fingerprint)
    if (found.kind !== 'claimed') return found
    const { claim } = found
    return {
      kind: 'claimed',
      // Never rejects, and never waits on the store for longer than a claim may: Hono and the
      // fetch handler answer only once it is settled. A done mark goes on being sent after that,
      // while the claim holds (markDone); a store that fails for good fails only the settling:
      // the claim expires on its own.
      settle: async (handled) => {
        const settling = handled ? markDone(claim, claimer.doneMs, claimHolds) : Promise.resolve().then(() => claim.release())
        try {
          await within(settling, claimer.claimTimeout)
        } catch (error) {
          console.error(
            handled
              ? `${packageName}: a delivery's done mark could not be written within claimTimeout; it is sent again while its claim holds, which otherwise expires on its own.`
              : `${packageName}: a delivery's claim could not be settled; it expires on its own.`,
            error,
          )
        }
      },
    }
  }
}

/**
 * With a hand-off no handler runs in the receiver, so it only looks: a delivery already handled is
 * a duplicate, one being handled (by a worker) is answered 409, and otherwise the claim it took is
 * given back at once, for the worker to take when the job runs. A store that fails is 503, as with
 * `dedupe`. The look's claim lives only as long as a look may take (`claimTimeout`), not
 * `processingTtl`: one the store took but could not give back (Redis gone between the two) would
 * otherwise turn the service's retries away with 409, and hold the worker's job, for minutes.
 */
export function createLook(options: DedupeOptions, packageName: string): (key: string, fingerprint: string) => Promise<DedupeVerdict> {
  const claimer = createClaimer(options, packageName)
  // Held for `claimTimeout`, not `processingTtl`: it is given back at once, and one that cannot be
  // (the store gone between the two) would turn a worker, and the service's retries, away until it
  // expired. Expiring before it is given back costs nothing: giving back an expired claim is a no-op.
  const lookMs = Math.min(claimer.claimTimeout, claimer.processingMs)
  return async (key, fingerprint) => {
    const found = await claimer.claim(key, fingerprint, lookMs)
    if (found.kind !== 'claimed') return found
    try {
      await within(Promise.resolve(found.claim.release()), claimer.claimTimeout)
    } catch (cause) {
      throw storeUnavailable(claimer.processingTtl, cause)
    }
    return NO_CLAIM
  }
}

/**
 * The key a delivery is claimed under, as every store takes it: the `key` option's, or the scoped
 * fingerprint; hashed when too long or not well-formed (see {@link MAX_STORED_KEY_LENGTH}).
 */
export async function storedKey(
  keyOf: DedupeOptions['key'],
  req: WebhookRequest,
  delivery: WebhookDelivery,
  scopedKey: () => Promise<string>,
  packageName: string,
): Promise<string> {
  const key = keyOf === undefined ? await scopedKey() : await keyOf(req, delivery)
  if (typeof key !== 'string' || key === '') {
    // Stryker disable next-line StringLiteral: message text only — the TypeError is pinned
    throw new TypeError(`${packageName}: dedupe.key must return a non-empty string`)
  }
  return key.length <= MAX_STORED_KEY_LENGTH && !LONE_SURROGATE.test(key) ? key : await hashedKey(key)
}

type ClaimVerdict = Exclude<DedupeVerdict, { kind: 'claimed' }> | { kind: 'claimed'; claim: Claim }

/** The store's claim on a key, turned into the receiver's verdict, within `claimTimeout`. */
function createClaimer(options: DedupeOptions, packageName: string) {
  const {
    store = memoryDedupeStore(),
    ttl = DEFAULT_DEDUPE_TTL,
    processingTtl = DEFAULT_PROCESSING_TTL,
    duplicateStatus = 200,
    claimTimeout = DEFAULT_CLAIM_TIMEOUT,
  } = options
  const processingMs = processingTtl * 1000
  return {
    doneMs: ttl * 1000,
    processingMs,
    processingTtl,
    claimTimeout,
    /** `ttlMs`: how long the claim is held, `processingTtl` unless told. */
    async claim(key: string, fingerprint: string, ttlMs = processingMs): Promise<ClaimVerdict> {
      let found: ClaimResult
      try {
        found = checkedClaim(await claimWithin(store, key, ttlMs, claimTimeout, packageName))
      } catch (cause) {
        throw storeUnavailable(processingTtl, cause)
      }
      switch (found.state) {
        case 'processing': {
          // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
          const error = new WebhookError('duplicate_in_progress', 'This delivery is already being processed; try again later.', {
            headers: { 'retry-after': String(retryAfter(found.retryAfterMs, processingMs)) },
          })
          return { kind: 'processing', error }
        }
        case 'done':
          return { kind: 'done', response: jsonResponse(duplicateStatus, { duplicate: true, fingerprint }) }
        default:
          return { kind: 'claimed', claim: found.claim }
      }
    },
  }
}

function storeUnavailable(processingTtl: number, cause: unknown): WebhookError {
  // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
  return new WebhookError('store_unavailable', 'The delivery store cannot be reached; the delivery was not processed. Try again later.', {
    headers: { 'retry-after': String(Math.min(processingTtl, 30)) },
    cause,
  })
}

/**
 * The `Retry-After` (whole seconds) of a 409 for a delivery whose claim has `leftMs` to run of
 * `processingMs`: as long as the claim has been held so far, at least 1 s and at most the time it
 * has left. A handler that has run for t is about as likely to need t more as to be done sooner,
 * so a sender that waits as long as it was told retries after t, 2t, 4t…: promptly after a fast
 * handler, a few times over a slow one, and never later than the claim's expiry, after which a
 * retry is handled. The whole `processingTtl` (300 s by default) kept a sender waiting minutes
 * for a handler that took a second. A store's figure is bounded: NaN, centuries or a claim taken
 * with a longer TTL than ours (another instance's settings) count as just taken.
 */
function retryAfter(leftMs: number, processingMs: number): number {
  const left = Number.isFinite(leftMs) && leftMs <= processingMs ? leftMs : processingMs
  const held = processingMs - left
  return Math.max(1, Math.min(Math.ceil(held / 1000), Math.ceil(left / 1000)))
}

/**
 * The store's claim, or a rejection once `timeoutMs` has passed without an answer: the sender is
 * answered 503 and retries. A claim granted after that is released at once, since no handler runs
 * for it; left alone it would turn every retry away with 409 until `processingTtl`.
 */
function claimWithin(store: DedupeStore, key: string, ttlMs: number, timeoutMs: number, packageName: string): Promise<ClaimResult> {
  const claiming = Promise.resolve(store.claim(key, ttlMs))
  return within(claiming, timeoutMs).catch((error: unknown) => {
    claiming.then(
      (found) => {
        if (found?.state !== 'claimed') return
        // A store that throws at once fails the same way as one that rejects.
        Promise.resolve()
          .then(() => found.claim.release())
          .catch((cause: unknown) => {
            console.error(`${packageName}: a delivery's claim that came too late could not be released; it expires on its own.`, cause)
          })
      },
      () => {},
    )
    throw error
  })
}

/** A claim as the interface promises it; anything else is a store that failed. */
function checkedClaim(found: ClaimResult): ClaimResult {
  // Stryker disable next-line OptionalChaining: equivalent — reading a property of nothing throws, and a throw here is the same 503
  const state = (found as { state?: unknown } | null | undefined)?.state
  if (state === 'done' || (state === 'processing' && typeof (found as { retryAfterMs?: unknown }).retryAfterMs === 'number')) return found
  const claim = (found as { claim?: Partial<Claim> }).claim
  // Stryker disable next-line OptionalChaining: equivalent — reading a property of nothing throws, and a throw here is the same 503
  if (state === 'claimed' && typeof claim?.complete === 'function' && typeof claim.release === 'function') return found
  throw new TypeError('the dedupe store answered a claim with neither claimed, processing nor done')
}

/** `work`, or a rejection once `timeoutMs` has passed without it settling. */
export function within<T>(work: Promise<T>, timeoutMs: number, what = 'the dedupe store'): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not answer within ${timeoutMs} ms`)), timeoutMs)
    work.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error)
      },
    )
  })
}

/** `sha256:` and the SHA-256 of the key's UTF-16 code units (little-endian), which keeps a lone surrogate apart from U+FFFD. */
async function hashedKey(key: string): Promise<string> {
  const units = new Uint8Array(key.length * 2)
  for (let i = 0; i < key.length; i++) {
    const unit = key.charCodeAt(i)
    units[2 * i] = unit & 0xff
    units[2 * i + 1] = unit >>> 8
  }
  return `sha256:${toHex(await backend.sha256(units))}`
}
