import type { HandoffJob, HandoffOptions, QueuedDelivery, RunOutcome, StandardSchemaV1, WebhookOptions } from '@hookguard/core'
import type { Job, Queue, Worker } from 'bullmq'
import { describe, expectTypeOf, it } from 'vitest'
import { createWorker, type DeadLetter, handoff } from '../src/index.ts'

// Stand-ins: their values are never used, only their types.
const queue = {} as Queue
const connection = { host: '127.0.0.1', port: 6379 }
const orderSchema = {} as StandardSchemaV1<unknown, { event: 'order.paid'; data: { orderNo: string; amount: number } }>

/** A worker's job data. */
type DataOf<W> = W extends Worker<infer Data> ? Data : never

// Types only: the functions are wrapped in arrows that never run, and only type-checked.
describe('the public types', () => {
  it('gives the core’s handoff option, and keeps the delivery’s id out of the job options', () => {
    expectTypeOf(handoff).returns.toEqualTypeOf<HandoffOptions>()
    expectTypeOf<WebhookOptions['handoff']>().toEqualTypeOf<HandoffOptions | undefined>()
    expectTypeOf(handoff).toBeCallableWith(queue, { status: 202, timeout: 2000, jobOptions: { attempts: 8, priority: 1 } })
    // @ts-expect-error the job id is the delivery's
    const own = () => handoff(queue, { jobOptions: { jobId: 'mine' } })
    // @ts-expect-error a second job of one delivery
    const second = () => handoff(queue, { jobOptions: { deduplication: { id: 'x' } } })
    expectTypeOf([own, second]).toBeArray()
  })

  it('flows the schema’s output type into the handler’s delivery, and the handler’s result into the job’s return value', () => {
    const typed = () =>
      createWorker(
        queue,
        (delivery, job) => {
          expectTypeOf(delivery).toEqualTypeOf<QueuedDelivery<{ event: 'order.paid'; data: { orderNo: string; amount: number } }>>()
          expectTypeOf(delivery.payload.data.amount).toEqualTypeOf<number>()
          expectTypeOf(job).toExtend<Job<HandoffJob<{ event: 'order.paid'; data: { orderNo: string; amount: number } }>>>()
          return delivery.payload.data.orderNo
        },
        { connection, schema: orderSchema },
      )
    expectTypeOf<DataOf<ReturnType<typeof typed>>>().toEqualTypeOf<
      HandoffJob<{ event: 'order.paid'; data: { orderNo: string; amount: number } }>
    >()
    type Order = HandoffJob<{ event: 'order.paid'; data: { orderNo: string; amount: number } }>
    // Plain assignments: expectTypeOf's deep comparison cannot walk BullMQ's Worker class.
    const strings: Worker<Order, RunOutcome<string>>[] = []
    const numbers: Worker<Order, RunOutcome<number>>[] = []
    const checks = [
      () => strings.push(typed()),
      // @ts-expect-error the job's return value holds the handler's string
      () => numbers.push(typed()),
    ]
    expectTypeOf(checks).toBeArray()
  })

  it('types a payload the caller names without a schema, and refuses a schema of another type', () => {
    const named = () => createWorker<{ id: number }, number>('webhooks', (delivery) => delivery.payload.id, { connection })
    expectTypeOf<DataOf<ReturnType<typeof named>>>().toEqualTypeOf<HandoffJob<{ id: number }>>()
    const numbers: Worker<HandoffJob<{ id: number }>, RunOutcome<number>>[] = []
    const strings: Worker<HandoffJob<{ id: number }>, RunOutcome<string>>[] = []
    const checks = [
      () => numbers.push(named()),
      // @ts-expect-error the job's return value holds the handler's number
      () => strings.push(named()),
    ]
    expectTypeOf(checks).toBeArray()
    // @ts-expect-error the schema's output is not the named payload
    const mismatched = () => createWorker<{ id: number }>('webhooks', () => {}, { connection, schema: orderSchema })
    expectTypeOf(mismatched).toBeFunction()
    expectTypeOf<DeadLetter['error']>().toEqualTypeOf<string>()
  })
})
