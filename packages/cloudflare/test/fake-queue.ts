import type { QueueBatch, QueueMessage } from '../src/queue-consumer.ts'
import type { QueueProducer } from '../src/queue-handoff.ts'

/**
 * A queue producer binding in process: each message sent is kept as the queue would carry it
 * (serialised as JSON, as `contentType: 'json'` asks), with the options it was sent with.
 * `fail(...errors)` makes the next sends reject with those errors, in turn; `hold()` makes the
 * next send wait until the returned function is called.
 */
export function fakeQueue() {
  const messages: { body: unknown; options: unknown }[] = []
  const faults: unknown[] = []
  let held: Promise<void> | undefined
  const binding: QueueProducer = {
    async send(body: never, options?: { contentType?: 'json' }) {
      const wait = held
      held = undefined
      // A send is a round trip: the answer comes later, whatever the queue did.
      await Promise.resolve()
      if (wait !== undefined) await wait
      if (faults.length > 0) throw faults.shift()
      messages.push({ body: JSON.parse(JSON.stringify(body)), options })
    },
  }
  return {
    binding,
    messages,
    fail(...errors: unknown[]) {
      faults.push(...errors)
    },
    hold(): () => void {
      let release = () => {}
      held = new Promise<void>((resolve) => {
        release = resolve
      })
      return release
    },
  }
}

/** How one message of a fake batch was settled: acknowledged, retried (with its options), or neither. */
export interface Settled {
  acked: number
  retried: ({ delaySeconds?: number } | undefined)[]
}

/** A batch of `bodies` as the runtime hands it to `queue()`, each message recording how it was settled. */
export function fakeBatch(bodies: readonly unknown[], { queue = 'webhooks', attempts = 1 } = {}) {
  const settled: Settled[] = bodies.map(() => ({ acked: 0, retried: [] }))
  const messages: QueueMessage[] = bodies.map((body, index) => {
    const record = settled[index] as Settled
    return {
      id: `message-${index}`,
      body,
      attempts,
      ack: () => void record.acked++,
      retry: (options?: { delaySeconds?: number }) => void record.retried.push(options),
    }
  })
  const batch: QueueBatch = { queue, messages }
  return { batch, settled }
}
