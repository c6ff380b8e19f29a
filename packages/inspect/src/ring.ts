import { appendFileSync, chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { type InspectedRecord, recordBytes } from './record.ts'

/** Deliveries kept by default, as Mailpit keeps 500 messages. */
export const DEFAULT_MAX_RECORDS = 500
/** Bytes kept by default, bodies and answers together: a flood of large deliveries stays bounded. */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024

export interface RingOptions {
  maxRecords?: number
  maxBytes?: number
  /** An NDJSON file: loaded at start, appended to per record, rewritten with what the ring keeps. */
  save?: string
}

/**
 * The records the inspector keeps, oldest first, bounded by count and by bytes: the oldest go
 * first. With `save`, each record is appended to an NDJSON file as it arrives, and the file is
 * read back (and compacted to what the bounds keep) when the next run starts.
 */
export class Ring {
  readonly #records = new Map<number, InspectedRecord>()
  readonly #maxRecords: number
  readonly #maxBytes: number
  readonly #save: string | undefined
  #bytes = 0
  #nextId = 1

  constructor({ maxRecords = DEFAULT_MAX_RECORDS, maxBytes = DEFAULT_MAX_BYTES, save }: RingOptions = {}) {
    if (!Number.isInteger(maxRecords) || maxRecords < 1) throw new TypeError('@hookguard/inspect: maxRecords must be a positive integer')
    if (!Number.isInteger(maxBytes) || maxBytes < 1) throw new TypeError('@hookguard/inspect: maxBytes must be a positive integer')
    this.#maxRecords = maxRecords
    this.#maxBytes = maxBytes
    this.#save = save
    if (save !== undefined) this.#load(save)
  }

  /** The next id to give; ids keep growing across a reload, so permalinks stay unique. */
  nextId(): number {
    return this.#nextId++
  }

  add(record: InspectedRecord): void {
    this.#insert(record)
    if (this.#save !== undefined) appendFileSync(this.#save, `${toLine(record)}\n`, { mode: 0o600 })
  }

  get(id: number): InspectedRecord | undefined {
    return this.#records.get(id)
  }

  /** Oldest first. */
  all(): InspectedRecord[] {
    return [...this.#records.values()]
  }

  get size(): number {
    return this.#records.size
  }

  get bytes(): number {
    return this.#bytes
  }

  delete(id: number): boolean {
    const record = this.#records.get(id)
    if (record === undefined) return false
    this.#records.delete(id)
    this.#bytes -= recordBytes(record)
    this.#rewrite()
    return true
  }

  clear(): void {
    this.#records.clear()
    this.#bytes = 0
    this.#rewrite()
  }

  #insert(record: InspectedRecord): void {
    this.#records.set(record.id, record)
    this.#bytes += recordBytes(record)
    if (record.id >= this.#nextId) this.#nextId = record.id + 1
    for (const [id, oldest] of this.#records) {
      if (this.#records.size <= this.#maxRecords && this.#bytes <= this.#maxBytes) break
      // The newest stays even alone over the byte bound: the page has to show what just came in.
      if (id === record.id) break
      this.#records.delete(id)
      this.#bytes -= recordBytes(oldest)
    }
  }

  #load(file: string): void {
    if (!existsSync(file)) return
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line.trim() === '') continue
      const record = fromLine(line)
      // A line cut short by a crash, or written by something else, is skipped, not fatal.
      if (record !== undefined) this.#insert(record)
    }
    this.#rewrite()
  }

  /** The file holds what the ring keeps: compacted at start, and after a delete. */
  #rewrite(): void {
    if (this.#save === undefined) return
    const lines = this.all().map(toLine)
    writeFileSync(this.#save, lines.length === 0 ? '' : `${lines.join('\n')}\n`, { mode: 0o600 })
    // `mode` applies only to a file it creates: one that existed keeps its own, and the file holds
    // credentials as they were received.
    chmodSync(this.#save, 0o600)
  }
}

/** A record as one NDJSON line: bytes as base64. */
export function toLine(record: InspectedRecord): string {
  return JSON.stringify(record, (_key, value: unknown) =>
    value instanceof Uint8Array ? { base64: Buffer.from(value).toString('base64') } : value,
  )
}

/** A line back into a record; `undefined` when it is not one. */
export function fromLine(line: string): InspectedRecord | undefined {
  try {
    const record = JSON.parse(line, (key, value: unknown) => {
      if (key === 'body' && typeof value === 'object' && value !== null && typeof (value as { base64?: unknown }).base64 === 'string') {
        return new Uint8Array(Buffer.from((value as { base64: string }).base64, 'base64'))
      }
      return value
    }) as InspectedRecord
    if (typeof record.id !== 'number' || !(record.body instanceof Uint8Array) || !Array.isArray(record.headers)) return undefined
    if (record.app !== undefined && !(record.app.body instanceof Uint8Array)) return undefined
    return record
  } catch {
    return undefined
  }
}
