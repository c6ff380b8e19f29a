// @hookguard/core: verify the service's deliveries on any runtime. Most apps use an adapter
// (@hookguard/express, /koa, /hono); this entry is for checking a signature by hand or building a
// receiver on another platform. Adapter building blocks are in @hookguard/core/adapter, Node
// request helpers in @hookguard/core/node.

export type { Resolvable, SecretLookup, WebhookAuth, WebhookMode } from './auth.ts'
export type { DedupeOptions } from './dedupe.ts'
export { DEFAULT_DEDUPE_TTL, DEFAULT_PROCESSING_TTL, MAX_STORED_KEY_LENGTH } from './dedupe.ts'
export type { Claim, ClaimResult, DedupeStore, MemoryDedupeStoreOptions } from './dedupe-store.ts'
export { DEFAULT_DEDUPE_MAX_ENTRIES, memoryDedupeStore } from './dedupe-store.ts'
export type { WebhookDelivery } from './delivery.ts'
export { BODY_IDLE_MS, BODY_MAX_MS, DRAIN_IDLE_MS, DRAIN_MAX_BYTES, DRAIN_MAX_MS } from './drain.ts'
export type { WebhookErrorCode, WebhookErrorInit } from './errors.ts'
export { ERROR_STATUS, WebhookError } from './errors.ts'
export type {
  DuplicateEvent,
  QueuedEvent,
  RejectedEvent,
  TokenIssuedEvent,
  TokenRefusedEvent,
  VerifiedEvent,
  WebhookEvent,
} from './events.ts'
export { EVENT_CHANNELS } from './events.ts'
export { MAX_FORM_FIELDS } from './form.ts'
export type { HandoffJob, HandoffOptions, HandoffQueue } from './handoff.ts'
export { DEFAULT_HANDOFF_STATUS, DEFAULT_HANDOFF_TIMEOUT, HANDOFF_HEADERS } from './handoff.ts'
export type { QueuedDelivery, RunOnceOptions, RunOutcome } from './handoff-run.ts'
export { DeliveryInProgressError, deliveryOfJob, runOnce } from './handoff-run.ts'
export type { WebhookOptions } from './options.ts'
export { DEFAULT_MAX_BODY_SIZE, DEFAULT_MAX_DEPTH, DEFAULT_SIGNATURE_HEADER, DEFAULT_TOKEN_TTL } from './options.ts'
export type { Receiver, ReceiverSetup, VerifyResult } from './receiver.ts'
export { createReceiver } from './receiver.ts'
export type { BodySource, HeaderSource, IncomingRequest, WebhookRequest } from './request.ts'
export type { WebhookResponse } from './response.ts'
export type { CanonicalForm, SignatureHint, VerifySignatureOptions } from './signature.ts'
export { sign, verifySignature } from './signature.ts'
export type { StandardSchemaV1 } from './standard-schema.ts'
export { TOKEN_MAX_BODY_SIZE, TOKEN_MAX_PARAMETERS } from './token-endpoint.ts'
