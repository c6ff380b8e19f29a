import type { DedupeStore } from './dedupe-store.ts'
import { memoryDedupeStore } from './dedupe-store.ts'
import { WebhookError } from './errors.ts'
import type { WebhookDelivery } from './receiver.ts'
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
   * `Retry-After`; a process that dies while handling loses the claim after it. Default 300.
   */
  processingTtl?: number
  /** Status of the answer to a duplicate of a handled delivery. Default 200: the service stops retrying. */
  duplicateStatus?: number
  /**
   * The key a delivery is claimed under. Default: its `fingerprint`, scoped by who sent it (the
   * secrets it was checked against, the Basic credentials, the OAuth app; in mode `none` the
   * address's path), so that two addresses or tenants sharing one store never collide. Give your
   * own to scope otherwise (`(req, delivery) => \`${tenantOf(req)}:${delivery.fingerprint}\``), or to
   * use an id of the payload's own. It runs after verification, for genuine deliveries only.
   */
  key?: (req: WebhookRequest, delivery: WebhookDelivery) => string | Promise<string>
}

export const DEFAULT_DEDUPE_TTL = 86_400
export const DEFAULT_PROCESSING_TTL = 300

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
 * Claims each fingerprint before the handler runs. A store that fails is answered 503
 * `store_unavailable`, never a second run; a claim that cannot be settled afterwards expires after
 * `processingTtl`, and is reported on the console.
 */
export function createDedupe(options: DedupeOptions, packageName: string): Dedupe {
  const {
    store = memoryDedupeStore(),
    ttl = DEFAULT_DEDUPE_TTL,
    processingTtl = DEFAULT_PROCESSING_TTL,
    duplicateStatus = 200,
    key: keyOf,
  } = options
  const doneMs = ttl * 1000
  const processingMs = processingTtl * 1000
  return async (req, delivery, scopedKey) => {
    const { fingerprint } = delivery
    const key = keyOf === undefined ? await scopedKey() : await keyOf(req, delivery)
    if (typeof key !== 'string' || key === '') {
      // Stryker disable next-line StringLiteral: message text only — the TypeError is pinned
      throw new TypeError(`${packageName}: dedupe.key must return a non-empty string`)
    }
    let found: Awaited<ReturnType<DedupeStore['claim']>>
    try {
      found = await store.claim(key, processingMs)
    } catch (cause) {
      // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
      throw new WebhookError(
        'store_unavailable',
        'The delivery store cannot be reached; the delivery was not processed. Try again later.',
        {
          headers: { 'retry-after': String(Math.min(processingTtl, 30)) },
          cause,
        },
      )
    }
    switch (found.state) {
      case 'processing': {
        const seconds = Math.max(1, Math.ceil(found.retryAfterMs / 1000))
        // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
        const error = new WebhookError('duplicate_in_progress', 'This delivery is already being processed; try again later.', {
          headers: { 'retry-after': String(seconds) },
        })
        return { kind: 'processing', error }
      }
      case 'done':
        return { kind: 'done', response: jsonResponse(duplicateStatus, { duplicate: true, fingerprint }) }
      default: {
        const { claim } = found
        return {
          kind: 'claimed',
          settle: (handled) =>
            (handled ? claim.complete(doneMs) : claim.release()).catch((error: unknown) => {
              console.error(`${packageName}: a delivery's claim could not be settled; it expires on its own.`, error)
            }),
        }
      }
    }
  }
}
