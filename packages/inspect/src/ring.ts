import { DEFAULT_MAX_BODY_SIZE } from '@hookguard/core'
import { type InspectedRecord, recordBytes } from './record.ts'
import { appendLine, loadRecords, replaceLines, toLine } from './save-file.ts'

export { fromLine, toLine } from './save-file.ts'

/** Deliveries kept by default, as Mailpit keeps 500 messages. */
export const DEFAULT_MAX_RECORDS = 500
/** Bytes kept by default, bodies and answers together: a flood of large deliveries stays bounded. */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024
/**
 * The save file is compacted to what the ring keeps once it holds more than this many times the
 * ring's records, or its lines' bytes: bounded while running, and each byte appended is written
 * again at most once more on average.
 */
export const COMPACT_FACTOR = 2

export interface RingOptions {
  maxRecords?: number
  maxBytes?: number
  /** An NDJSON file: loaded by {@link Ring.open}, appended to per record, compacted to what the ring keeps. */
  save?: string
  /** The largest body a record loaded from `save` may hold: the inspector's size limit. Default 1 MiB. */
  maxBodySize?: number
  /** Told, once, how many lines of `save` were not records and were dropped. Default `console.error`. */
  onWarning?: (message: string) => void
}

/**
 * The records the inspector keeps, oldest first, bounded by count and by bytes: the oldest go
 * first. With `save`, each record is appended to an NDJSON file as it arrives; the file is
 * compacted to what the ring keeps when it grows past {@link COMPACT_FACTOR} times that, and
 * after a delete, and read back as a stream when the next run starts.
 */
export class Ring {
  readonly #records = new Map<number, InspectedRecord>()
  readonly #maxRecords: number
  readonly #maxBytes: number
  #save: string | undefined
  #bytes = 0
  #nextId = 1
  /** With `save`: each kept record's line length in the file, their sum, and what the file holds. */
  readonly #lineBytes = new Map<number, number>()
  #keptLineBytes = 0
  #fileBytes = 0
  #fileLines = 0

  /** A ring in memory. One with a save file is made by {@link Ring.open}, which loads the file first. */
  constructor({ maxRecords = DEFAULT_MAX_RECORDS, maxBytes = DEFAULT_MAX_BYTES, save }: RingOptions = {}) {
    if (!Number.isInteger(maxRecords) || maxRecords < 1) throw new TypeError('@hookguard/inspect: maxRecords must be a positive integer')
    if (!Number.isInteger(maxBytes) || maxBytes < 1) throw new TypeError('@hookguard/inspect: maxBytes must be a positive integer')
    if (save !== undefined) throw new TypeError('@hookguard/inspect: a ring with a save file is made by Ring.open, which loads it')
    this.#maxRecords = maxRecords
    this.#maxBytes = maxBytes
  }

  /**
   * A ring, and with `save` its file loaded: streamed line by line, the last records the bounds
   * keep kept, every line that is not a record of the right shape skipped and counted (said once
   * through `onWarning`, without its content), then the file compacted to what is kept.
   */
  static async open({
    save,
    maxBodySize = DEFAULT_MAX_BODY_SIZE,
    onWarning = (message) => console.error(message),
    ...bounds
  }: RingOptions = {}): Promise<Ring> {
    const ring = new Ring(bounds)
    if (save === undefined) return ring
    const { skipped } = await loadRecords(save, { maxBodySize }, (record) => ring.#insert(record))
    ring.#save = save
    ring.#rewrite()
    if (skipped > 0) {
      onWarning(
        `hookguard inspect: ${skipped} ${skipped === 1 ? 'line' : 'lines'} of ${save} ${skipped === 1 ? 'is' : 'are'} not a record (cut short, edited, or over the size limits): skipped, and dropped from the file.`,
      )
    }
    return ring
  }

  /** The next id to give; ids keep growing across a reload, so permalinks stay unique. */
  nextId(): number {
    return this.#nextId++
  }

  /**
   * Keeps `record`, and returns the ids dropped to stay within the bounds, oldest first: the page
   * is told them, so that it lists what the ring keeps and nothing more.
   */
  add(record: InspectedRecord): number[] {
    if (this.#save === undefined) return this.#insert(record)
    const line = toLine(record)
    const evicted = this.#insert(record, Buffer.byteLength(line) + 1)
    this.#fileBytes += appendLine(this.#save, line)
    this.#fileLines++
    if (this.#fileLines > COMPACT_FACTOR * this.#maxRecords || this.#fileBytes > COMPACT_FACTOR * this.#keptLineBytes) this.#rewrite()
    return evicted
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
    if (!this.#records.has(id)) return false
    this.#remove(id)
    this.#rewrite()
    return true
  }

  clear(): void {
    for (const id of [...this.#records.keys()]) this.#remove(id)
    this.#rewrite()
  }

  #insert(record: InspectedRecord, lineBytes = 0): number[] {
    const evicted: number[] = []
    // The same id twice (a file edited by hand): the later one stands.
    if (this.#records.has(record.id)) this.#remove(record.id)
    this.#records.set(record.id, record)
    this.#bytes += recordBytes(record)
    this.#lineBytes.set(record.id, lineBytes)
    this.#keptLineBytes += lineBytes
    if (record.id >= this.#nextId) this.#nextId = record.id + 1
    for (const id of this.#records.keys()) {
      if (this.#records.size <= this.#maxRecords && this.#bytes <= this.#maxBytes) break
      // The newest stays even alone over the byte bound: the page has to show what just came in.
      if (id === record.id) break
      this.#remove(id)
      evicted.push(id)
    }
    return evicted
  }

  #remove(id: number): void {
    const record = this.#records.get(id)
    if (record === undefined) return
    this.#records.delete(id)
    this.#bytes -= recordBytes(record)
    this.#keptLineBytes -= this.#lineBytes.get(id) ?? 0
    this.#lineBytes.delete(id)
  }

  /** The file holds what the ring keeps, and nothing else. */
  #rewrite(): void {
    if (this.#save === undefined) return
    // One line at a time: the ring's records are not held twice over as text.
    function* lines(ring: Ring): Generator<string> {
      for (const record of ring.#records.values()) {
        const line = toLine(record)
        const bytes = Buffer.byteLength(line) + 1
        ring.#keptLineBytes += bytes - (ring.#lineBytes.get(record.id) ?? 0)
        ring.#lineBytes.set(record.id, bytes)
        yield line
      }
    }
    this.#fileBytes = replaceLines(this.#save, lines(this))
    this.#fileLines = this.#records.size
  }
}
