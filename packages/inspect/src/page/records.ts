import type { RecordSummary } from '../view.ts'

/**
 * The records the page lists: a copy of what the server's ring keeps, kept by the server's
 * stream. Indexed by id, and token requests by the deliveries that present their token, so that
 * a change costs the rows it touches and never a pass over every record.
 */
export class Records {
  readonly #byId = new Map<number, RecordSummary>()
  /** Token request id → the deliveries kept that present its token. */
  readonly #users = new Map<number, Set<number>>()
  readonly #changed: (ids: Iterable<number>) => void

  /** `changed` is told the ids whose row has to be drawn again: added, changed, linked or gone. */
  constructor(changed: (ids: Iterable<number>) => void) {
    this.#changed = changed
  }

  get size(): number {
    return this.#byId.size
  }

  get(id: number): RecordSummary | undefined {
    return this.#byId.get(id)
  }

  ids(): IterableIterator<number> {
    return this.#byId.keys()
  }

  /** The deliveries kept that present the token request `id` issued, oldest first. */
  usedBy(id: number): number[] {
    return [...(this.#users.get(id) ?? [])].sort((a, b) => a - b)
  }

  /**
   * The record the page opens by itself while nothing is chosen: the newest refused (its cause is
   * what the reader came for), else the newest. One pass, asked at most once per drawn frame.
   */
  firstToOpen(): number | undefined {
    let newest: number | undefined
    let refused: number | undefined
    for (const [id, r] of this.#byId) {
      if (newest === undefined || id > newest) newest = id
      if (r.verdict === 'refused' && (refused === undefined || id > refused)) refused = id
    }
    return refused ?? newest
  }

  put(summary: RecordSummary): void {
    const touched = this.#drop(summary.id)
    this.#byId.set(summary.id, summary)
    touched.add(summary.id)
    if (summary.tokenId !== undefined) {
      const users = this.#users.get(summary.tokenId) ?? new Set<number>()
      users.add(summary.id)
      this.#users.set(summary.tokenId, users)
      touched.add(summary.tokenId)
    }
    this.#changed(touched)
  }

  delete(ids: readonly number[]): void {
    const touched = new Set<number>()
    for (const id of ids) for (const one of this.#drop(id)) touched.add(one)
    this.#changed(touched)
  }

  /** Everything replaced by what the server keeps now. */
  replace(summaries: readonly RecordSummary[]): void {
    const touched = new Set(this.#byId.keys())
    this.#byId.clear()
    this.#users.clear()
    this.#changed(touched)
    for (const summary of summaries) this.put(summary)
  }

  /** Forgets `id` (and its link to its token request); the ids whose row changes. */
  #drop(id: number): Set<number> {
    const touched = new Set<number>()
    const old = this.#byId.get(id)
    if (old === undefined) return touched
    this.#byId.delete(id)
    touched.add(id)
    if (old.tokenId !== undefined) {
      const users = this.#users.get(old.tokenId)
      users?.delete(id)
      if (users?.size === 0) this.#users.delete(old.tokenId)
      touched.add(old.tokenId)
    }
    return touched
  }
}
