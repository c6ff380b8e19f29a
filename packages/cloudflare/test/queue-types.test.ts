import type { ExecutionContext, ExportedHandler, Message, MessageBatch, Queue } from '@cloudflare/workers-types'
import type { HandoffOptions, QueuedDelivery, StandardSchemaV1 } from '@hookguard/core'
import { describe, expectTypeOf, it } from 'vitest'
import { type QueueBatch, type QueueMessage, queueConsumer } from '../src/queue-consumer.ts'
import type { QueueProducer, queueHandoff } from '../src/queue-handoff.ts'

interface Order {
  orderId: number
}

interface Env {
  WEBHOOKS: Queue
}

const schema: StandardSchemaV1<unknown, Order> = {
  '~standard': { version: 1, vendor: 'test', validate: (value) => ({ value: value as Order }) },
}

describe('the Queues types', () => {
  it('takes the producer binding as the Workers types give it, of any body type, and gives the handoff option', () => {
    expectTypeOf<Queue>().toExtend<QueueProducer>()
    expectTypeOf<Queue<{ any: 'body' }>>().toExtend<QueueProducer>()
    expectTypeOf<{ put(key: string): Promise<void> }>().not.toExtend<QueueProducer>()
    expectTypeOf<typeof queueHandoff>().returns.toEqualTypeOf<HandoffOptions>()
  })

  it('reads the batch and messages the runtime hands over', () => {
    expectTypeOf<MessageBatch>().toExtend<QueueBatch>()
    expectTypeOf<Message>().toExtend<QueueMessage>()
  })

  it('types the delivery with the schema’s output, and env and ctx from the handler', () => {
    queueConsumer(
      (delivery, env: Env, ctx: ExecutionContext) => {
        expectTypeOf(delivery).toEqualTypeOf<QueuedDelivery<Order>>()
        expectTypeOf(delivery.payload).toEqualTypeOf<Order>()
        expectTypeOf(delivery.rawBody).toEqualTypeOf<Uint8Array>()
        expectTypeOf(env.WEBHOOKS).toEqualTypeOf<Queue>()
        expectTypeOf(ctx).toEqualTypeOf<ExecutionContext>()
      },
      { schema },
    )
  })

  it('is the Worker’s queue export, and takes a store made of env', () => {
    const handler = {
      queue: queueConsumer<Order, Env>(async () => {}, { store: (env) => ({ claim: () => env.WEBHOOKS.send(1) as never }) }),
    } satisfies ExportedHandler<Env>
    expectTypeOf(handler.queue).parameters.toEqualTypeOf<[QueueBatch, Env, unknown]>()
    // @ts-expect-error a schema’s output and the Payload named differ
    queueConsumer<{ other: string }>(() => {}, { schema })
  })
})
