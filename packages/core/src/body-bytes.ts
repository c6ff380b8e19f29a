/**
 * The size of the pieces a body's short chunks are copied into. A sender chooses its chunks:
 * kept one by one, a body sent one byte to a chunk held an object (and an allocation) for every
 * byte, and 1 MiB of it took about 220 MB of memory and more than a second of the collector's
 * time, where the limit promises 1 MiB (bench/notes.md, 2026-12-01, late).
 */
export const BODY_PIECE = 16 * 1024

/**
 * A body's bytes as they arrive, in at most about three pieces per {@link BODY_PIECE} whatever
 * the chunking: the first chunk is kept as it came (a body that arrives in one chunk, nearly every
 * delivery, is handed on without a copy), a chunk of a piece's size or more too, and shorter ones
 * are copied into pieces filled in turn. Joined once, at the end, as the chunks were before.
 * `allocate` and `join` make a build's own bytes (a `Buffer` on Node); plain `Uint8Array`s by
 * default.
 *
 * @example
 * const kept = new BodyBytes()
 * for (let at = 0; at < rawBody.length; at += 1024) kept.add(rawBody.subarray(at, at + 1024))
 * const body = kept.bytes() // the same bytes as rawBody, in one array
 */
export class BodyBytes<Bytes extends Uint8Array = Uint8Array> {
  readonly #allocate: (length: number) => Bytes
  readonly #join: (pieces: readonly Uint8Array[], size: number) => Bytes
  #pieces: Uint8Array[] = []
  /** The piece being filled, and how far. */
  #open: Uint8Array | undefined
  #filled = 0
  /** Bytes held. */
  size = 0

  constructor(
    allocate: (length: number) => Bytes = allocateBytes as (length: number) => Bytes,
    join: (pieces: readonly Uint8Array[], size: number) => Bytes = joinBytes as (pieces: readonly Uint8Array[], size: number) => Bytes,
  ) {
    this.#allocate = allocate
    this.#join = join
  }

  add(chunk: Bytes): void {
    this.size += chunk.byteLength
    if (this.#pieces.length === 0) {
      this.#pieces.push(chunk)
      return
    }
    if (chunk.byteLength >= BODY_PIECE) {
      this.#close()
      this.#pieces.push(chunk)
      return
    }
    // A chunk shorter than a piece fills the open one, and the rest of it starts the next.
    let from = 0
    while (from < chunk.byteLength) {
      const open = this.#open ?? this.#allocate(BODY_PIECE)
      const taken = Math.min(BODY_PIECE - this.#filled, chunk.byteLength - from)
      open.set(taken === chunk.byteLength ? chunk : chunk.subarray(from, from + taken), this.#filled)
      from += taken
      this.#filled += taken
      if (this.#filled === BODY_PIECE) {
        this.#pieces.push(open)
        this.#open = undefined
        this.#filled = 0
      } else this.#open = open
    }
  }

  /** Every byte added, in order: the first chunk itself when it was the only one. */
  bytes(): Bytes {
    this.#close()
    return this.#pieces.length === 1 ? (this.#pieces[0] as Bytes) : this.#join(this.#pieces, this.size)
  }

  /** Lets go of every byte (a refused body): what arrives afterwards is only counted by the caller. */
  clear(): void {
    this.#pieces = []
    this.#open = undefined
    this.#filled = 0
    this.size = 0
  }

  #close(): void {
    if (this.#open === undefined) return
    this.#pieces.push(this.#open.subarray(0, this.#filled))
    this.#open = undefined
    this.#filled = 0
  }
}

const allocateBytes = (length: number) => new Uint8Array(length)

/** Pieces joined into one new array of `size` bytes. */
export function joinBytes(pieces: readonly Uint8Array[], size: number): Uint8Array {
  const body = new Uint8Array(size)
  let offset = 0
  for (const piece of pieces) {
    body.set(piece, offset)
    offset += piece.byteLength
  }
  return body
}
