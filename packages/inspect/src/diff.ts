import { stripJavaWhitespace } from '@hookguard/core/adapter'
import type { InspectedRecord } from './record.ts'
import { redactBody, redactHeader } from './redact.ts'

/** A run of text, marked where it differs from the other side. */
export interface DiffSegment {
  text: string
  changed: boolean
}

export interface HeaderDiff {
  name: string
  a: string | null
  b: string | null
  same: boolean
}

export interface RecordDiff {
  a: number
  b: number
  headers: HeaderDiff[]
  body: { a: DiffSegment[]; b: DiffSegment[]; same: boolean }
  /** The texts the signatures cover (Java's whitespace removed). */
  signed: { a: DiffSegment[]; b: DiffSegment[]; same: boolean }
}

/** Bytes compared at most; beyond it the rest is one changed run. */
const MAX_COMPARED = 256 * 1024

/**
 * Where two byte strings differ: the common start and end are unchanged, and the middle of each is
 * marked. One pass from each end, never a quadratic alignment: a re-serialised body (escapes,
 * whitespace, key order) shows its first and last difference, which is what is looked for.
 */
export function diffBytes(a: Uint8Array, b: Uint8Array): { a: DiffSegment[]; b: DiffSegment[]; same: boolean } {
  const x = a.subarray(0, MAX_COMPARED)
  const y = b.subarray(0, MAX_COMPARED)
  let start = 0
  while (start < x.length && start < y.length && x[start] === y[start]) start++
  let end = 0
  while (end < x.length - start && end < y.length - start && x[x.length - 1 - end] === y[y.length - 1 - end]) end++
  // Never cut a UTF-8 sequence: move the cuts back to a character's first byte.
  while (start > 0 && ((x[start] ?? 0) & 0xc0) === 0x80) start--
  while (end > 0 && ((x[x.length - end] ?? 0) & 0xc0) === 0x80) end--
  const same = a.byteLength === b.byteLength && start === x.length
  const split = (bytes: Uint8Array): DiffSegment[] => {
    const decode = (part: Uint8Array) => new TextDecoder().decode(part)
    const segments: DiffSegment[] = []
    const head = bytes.subarray(0, start)
    const middle = bytes.subarray(start, bytes.length - end)
    const tail = bytes.subarray(bytes.length - end)
    if (head.length > 0) segments.push({ text: decode(head), changed: false })
    if (middle.length > 0) segments.push({ text: decode(middle), changed: true })
    if (tail.length > 0) segments.push({ text: decode(tail), changed: false })
    return segments
  }
  return { a: split(x), b: split(y), same }
}

export function diffRecords(a: InspectedRecord, b: InspectedRecord): RecordDiff {
  const names = new Map<string, string>()
  for (const [name] of [...a.headers, ...b.headers]) if (!names.has(name.toLowerCase())) names.set(name.toLowerCase(), name)
  const value = (record: InspectedRecord, lower: string) => {
    const found = record.headers.filter(([name]) => name.toLowerCase() === lower).map(([name, v]) => redactHeader(name, v))
    return found.length === 0 ? null : found.join(', ')
  }
  const headers = [...names].map(([lower, name]) => {
    const va = value(a, lower)
    const vb = value(b, lower)
    return { name, a: va, b: vb, same: va === vb }
  })
  // The bodies as the detail shows them: a form's credential fields `[redacted]`.
  const bodyA = redactBody(a.headers, a.body)
  const bodyB = redactBody(b.headers, b.body)
  return {
    a: a.id,
    b: b.id,
    headers,
    body: diffBytes(bodyA, bodyB),
    signed: diffBytes(stripJavaWhitespace(bodyA), stripJavaWhitespace(bodyB)),
  }
}
