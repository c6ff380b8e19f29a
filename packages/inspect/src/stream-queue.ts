/**
 * The changes waiting to be written to one open page, bounded: past `max`, they are dropped and
 * the page is owed the whole ring again instead, which costs at most the ring's size however long
 * the page has not read. A page that never reads holds `max` changes, not every delivery since.
 */
export class StreamQueue<T> {
  #items: T[] = []
  #behind = false
  readonly #max: number

  constructor(max: number) {
    if (!Number.isInteger(max) || max < 1) throw new TypeError('@hookguard/inspect: a stream queue holds at least one change')
    this.#max = max
  }

  push(item: T): void {
    if (this.#items.length < this.#max) {
      this.#items.push(item)
      return
    }
    this.#items = []
    this.#behind = true
  }

  get empty(): boolean {
    return this.#items.length === 0 && !this.#behind
  }

  /** Everything waiting; `resync` when changes were dropped, to be sent the ring before `items`. */
  take(): { resync: boolean; items: T[] } {
    const taken = { resync: this.#behind, items: this.#items }
    this.#items = []
    this.#behind = false
    return taken
  }
}
