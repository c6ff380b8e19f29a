import { channelFor } from '#diagnostics'
import type { WebhookMode } from './auth.ts'
import type { WebhookErrorCode } from './errors.ts'
import type { CanonicalForm, SignatureHint } from './signature.ts'

/**
 * What a receiver tells its owner about each request: the `onEvent` option's argument, and on Node
 * the message of the `hookguard:<type>` diagnostics channels. Bounded values only (codes, modes,
 * sizes, durations, the fingerprint): never a secret, a password, a token, a query string or a
 * body, so an event can go to any log or metrics backend as it is.
 */
export type WebhookEvent = VerifiedEvent | RejectedEvent | DuplicateEvent | QueuedEvent | TokenIssuedEvent | TokenRefusedEvent

interface EventBase {
  mode: WebhookMode
  /** Milliseconds from the request reaching hookguard to its verdict. */
  durationMs: number
}

export interface VerifiedEvent extends EventBase {
  type: 'verified'
  /**
   * Mode `secret`: the text the signature covered. `'service'` is the service's own; `'gson'` or
   * `'unicode'` mean a sender that serialises or strips differently, worth a look.
   */
  form?: CanonicalForm
  fingerprint: string
  bodyBytes: number
}

export interface RejectedEvent extends EventBase {
  type: 'rejected'
  code: WebhookErrorCode
  status: number
  /** Bytes of the body read before the refusal; absent when it was refused unread. */
  bodyBytes?: number
  /** `invalid_signature`: the likeliest reason, when one is known. */
  hint?: SignatureHint
}

export interface DuplicateEvent extends EventBase {
  type: 'duplicate'
  fingerprint: string
  /**
   * The first delivery is still being handled (answered 409), was handled (answered without the
   * handler), or, with `handoff`, its job is on the queue already (no second job).
   */
  state: 'processing' | 'done' | 'queued'
}

/** With `handoff`: the delivery is on the queue, and the service was answered. */
export interface QueuedEvent extends EventBase {
  type: 'queued'
  fingerprint: string
  /** The queue's id of the job. */
  jobId: string
}

export interface TokenIssuedEvent extends EventBase {
  type: 'token_issued'
  /** Seconds the token lives. */
  expiresIn: number
}

export interface TokenRefusedEvent extends EventBase {
  type: 'token_refused'
  code: WebhookErrorCode
  status: number
}

export type EventListener = (event: WebhookEvent) => void

/** Every event type, each with a diagnostics channel of its own. */
const TYPES = [
  'verified',
  'rejected',
  'duplicate',
  'queued',
  'token_issued',
  'token_refused',
] as const satisfies readonly WebhookEvent['type'][]

/** The diagnostics channel names, for subscribers: `hookguard:verified`, `hookguard:rejected`… */
export const EVENT_CHANNELS = Object.fromEntries(TYPES.map((type) => [type, `hookguard:${type}`])) as {
  readonly [Type in WebhookEvent['type']]: `hookguard:${Type}`
}

const channels = Object.fromEntries(TYPES.map((type) => [type, channelFor(EVENT_CHANNELS[type])]))

/**
 * Publishes events to the listener and the diagnostics channels. `wanted(type)` is asked first, so
 * a receiver nobody listens to builds no event at all. A listener that throws (or rejects) never
 * changes the answer: its error is reported on the console, with the package's name.
 */
export interface Emitter {
  wanted(type: WebhookEvent['type']): boolean
  emit(event: WebhookEvent): void
}

export function createEmitter(listener: EventListener | undefined, packageName: string): Emitter {
  return {
    wanted: (type) => listener !== undefined || channels[type]?.hasSubscribers === true,
    emit(event) {
      channels[event.type]?.publish(event)
      if (listener === undefined) return
      try {
        const result: unknown = listener(event)
        if (result instanceof Promise) result.catch((error: unknown) => reportListenerError(packageName, error))
      } catch (error) {
        reportListenerError(packageName, error)
      }
    },
  }
}

function reportListenerError(packageName: string, error: unknown): void {
  console.error(`${packageName}: the onEvent listener threw; the answer was not changed.`, error)
}
