import { fail } from './validate.ts'

/**
 * Payloads shaped like the service's own, chosen for what tends to break receivers: CJK text and
 * a space inside a value (removed before signing), an amount with a fraction, and a URL and
 * markup whose `= & < > '` Gson escapes. Each serialises to the body of the fixture vector of
 * the same event.
 */
/** The sample events {@link sampleEvent} knows. */
export type SampleEventName = 'customer.created' | 'order.paid' | 'link.clicked'

const SAMPLES: Readonly<Record<SampleEventName, object>> = {
  'customer.created': {
    event: 'customer.created',
    tenant: 'acme',
    data: { id: 884211, name: '王 小明', mobile: '+8613800138000', email: 'xm.wang@example.cn', tags: ['vip', '新客'] },
  },
  'order.paid': {
    event: 'order.paid',
    data: {
      orderNo: 'SO-2026-000981',
      amount: 1299.5,
      currency: 'CNY',
      items: [
        { sku: 'A-1', qty: 2, price: 399 },
        { sku: 'B-7', qty: 1, price: 501.5 },
      ],
    },
  },
  'link.clicked': {
    event: 'link.clicked',
    data: { url: 'https://shop.example.com/p?id=42&utm_source=wechat&utm_medium=menu', label: "<b>Buy</b> & save '20%'" },
  },
} as const

/** The names {@link sampleEvent} knows, the default first. */
export const SAMPLE_EVENT_NAMES = Object.keys(SAMPLES) as readonly SampleEventName[]

/**
 * A realistic payload for tests and demos, a fresh copy on every call (change it freely).
 *
 * @param name `'customer.created'` (default), `'order.paid'` or `'link.clicked'`.
 * @example
 * await deliver({ url, mode: 'none', payload: sampleEvent('order.paid') })
 */
export function sampleEvent(name: SampleEventName = 'customer.created'): Record<string, unknown> {
  if (!Object.hasOwn(SAMPLES, name)) fail(`no sample event named ${JSON.stringify(name)}; try ${SAMPLE_EVENT_NAMES.join(', ')}`)
  return structuredClone(SAMPLES[name]) as unknown as Record<string, unknown>
}
