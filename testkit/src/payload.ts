/**
 * Webhook bodies for the benchmarks, deterministic and exactly sized.
 *
 * Portable on purpose (no Node APIs, only erasable TypeScript): the Web-build script imports it on
 * Node 24, Bun and Deno, which run this file without a build step.
 */

export type Shape = 'compact' | 'pretty' | 'gson'

export interface Payload {
  /** e.g. `compact-1KiB` */
  id: string
  shape: Shape
  size: number
  sizeLabel: string
  text: string
  bytes: Uint8Array
}

export const SIZES = [
  { size: 1024, label: '1 KiB' },
  { size: 64 * 1024, label: '64 KiB' },
  { size: 1024 * 1024, label: '1 MiB' },
] as const

export const SHAPES: readonly Shape[] = ['compact', 'pretty', 'gson']

export const SHAPE_LABELS: Record<Shape, string> = {
  compact: 'compact (no whitespace)',
  pretty: 'pretty (2-space indent)',
  gson: 'compact, spaces in values',
}

// A fixed seed keeps the bodies, and so the figures, identical from run to run and runtime to runtime.
export function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const SURNAMES = ['王', '李', '张', '刘', '陈', 'Smith', 'García', 'Müller', 'Nguyen', 'Kowalski']
const GIVEN = ['伟', '芳', '娜', '敏', 'Anna', 'José', 'Jürgen', 'Linh', 'Olivia', 'Zoë']
const CITIES = ['上海', '北京', '深圳', 'São Paulo', 'München', 'Kraków', 'Hà Nội', 'London']
const STREETS = ['Century Avenue', 'Nanjing Road', 'Rua Augusta', 'Leopoldstraße', 'Baker Street']
const TAGS = ['vip', 'newsletter', 'sms-opt-in', 'churn-risk', 'first-order', 'wechat', 'loyalty-gold']
const NOTES = [
  'prefers contact by SMS after 6 pm',
  'asked about the spring promotion',
  'moved from the Pudong store',
  'gift card balance carried over',
]

/**
 * One customer record. With `spaces`, free-text values hold spaces the way real deliveries do; the
 * service's Java `\s` stripping removes them before signing, so such bodies cannot be hashed as is.
 */
function customer(next: () => number, index: number, spaces: boolean): Record<string, unknown> {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T
  const join = (text: string) => (spaces ? text : text.replaceAll(' ', '-'))
  const id = String(100000 + index)
  return {
    id: `cus_${id}`,
    mobile: `13${String(Math.floor(next() * 1e9)).padStart(9, '0')}`,
    name: `${pick(SURNAMES)}${pick(GIVEN)}`,
    email: `user${id}@example.com`,
    gender: next() < 0.5 ? 'female' : 'male',
    birthday: `19${70 + Math.floor(next() * 30)}-0${1 + Math.floor(next() * 9)}-1${Math.floor(next() * 9)}`,
    city: join(pick(CITIES)),
    address: join(`No. ${1 + Math.floor(next() * 999)} ${pick(STREETS)}`),
    tags: [pick(TAGS), pick(TAGS)],
    points: Math.floor(next() * 100000),
    balance: Math.round(next() * 100000) / 100,
    optIn: next() < 0.7,
    lastOrder: {
      orderId: `ord_${Math.floor(next() * 1e12)}`,
      amount: Math.round(next() * 50000) / 100,
      currency: 'CNY',
      items: 1 + Math.floor(next() * 9),
    },
    note: join(pick(NOTES)),
    updatedAt: `2026-01-${String(1 + (index % 28)).padStart(2, '0')}T08:${String(index % 60).padStart(2, '0')}:00Z`,
  }
}

function envelope(customers: Record<string, unknown>[], trace: string): Record<string, unknown> {
  return {
    event: 'customer.updated',
    eventId: 'evt_7f3c2a9e5b1d4c08',
    appId: 'app_2049',
    timestamp: 1767254400000,
    data: { customers },
    // Pads the body to the exact size; ASCII, so one character is one byte.
    trace,
  }
}

const encoder = new TextEncoder()

/** Exactly `size` bytes of `shape` JSON. */
export function makePayload(shape: Shape, size: number, sizeLabel: string): Payload {
  const next = random(size + shape.length)
  const serialise = (customers: Record<string, unknown>[], trace: string) =>
    shape === 'pretty' ? JSON.stringify(envelope(customers, trace), null, 2) : JSON.stringify(envelope(customers, trace))
  const length = (text: string) => encoder.encode(text).length

  // Enough records to overflow the size in any shape, then the largest prefix that fits, found by
  // bisection: adding one record at a time and re-serialising would be quadratic at 1 MiB.
  const pool: Record<string, unknown>[] = []
  for (let total = 0; total <= size; ) {
    const record = customer(next, pool.length, shape === 'gson')
    pool.push(record)
    total += length(JSON.stringify(record)) + 1
  }
  let low = 0
  let high = pool.length
  while (low < high) {
    const mid = Math.ceil((low + high) / 2)
    if (length(serialise(pool.slice(0, mid), '')) <= size) low = mid
    else high = mid - 1
  }
  const customers = pool.slice(0, low)
  const deficit = size - length(serialise(customers, ''))
  const text = serialise(customers, 'x'.repeat(deficit))
  const bytes = encoder.encode(text)
  if (bytes.length !== size) throw new Error(`payload ${shape} ${size}: got ${bytes.length} bytes`)
  // The compact body is the case where the canonical form is the body itself; a stray whitespace
  // byte would silently turn it into the copying case.
  if (shape === 'compact' && bytes.some((b) => b === 0x20 || (b >= 0x09 && b <= 0x0d))) {
    throw new Error('compact payload holds whitespace')
  }
  return { id: `${shape}-${sizeLabel.replace(' ', '')}`, shape, size, sizeLabel, text, bytes }
}

export function allPayloads(shapes: readonly Shape[] = SHAPES): Payload[] {
  return shapes.flatMap((shape) => SIZES.map(({ size, label }) => makePayload(shape, size, label)))
}
