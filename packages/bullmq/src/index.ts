// @hookguard/bullmq: the hand-off on BullMQ. A receiver answers the service once a verified
// delivery is a job on the user's queue; a worker runs each delivery once, with retries and a dead-letter.
export type { DeadLetter } from './dead-letter.ts'
export type { BullmqHandoffOptions, HandoffJobOptions } from './handoff.ts'
export { DEFAULT_JOB_OPTIONS, handoff } from './handoff.ts'
export type { DeliveryHandler, HandoffBullJob, HandoffWorkerOptions } from './worker.ts'
export { createWorker } from './worker.ts'
