/**
 * The WebAssembly kernels (strip.wat), one instance over one memory, for both builds:
 * - Java-`\s` stripping by a SIMD kernel, about ten times the speed of the word-at-a-time
 *   JavaScript in strip.ts;
 * - the Gson fallback's text (Gson's escapes applied, Java's whitespace removed): about one and
 *   a half HMACs of the body on the worst hostile one, where canonical.ts's JavaScript pass costs
 *   ten (a pass that branches on each byte's kind is as slow on a body that mixes kinds at
 *   random), and a fifth of one on an ordinary body;
 * - whether a chunk holds any of Java's whitespace at all: one SIMD pass over its copy, where the
 *   platform's search takes one `memchr` per whitespace byte, six passes;
 * - every Unicode whitespace character removed (`unicodeWhitespace: true`): 16 bytes at a time
 *   without a branch on the bytes, about one HMAC of the body or less, where canonical.ts's
 *   JavaScript costs six to seven on a body whose bytes mix kinds at random (its branches
 *   mispredict).
 * The JavaScript stays the fallback where no WebAssembly module can be had (`node --jitless`, a
 * runtime that refuses to compile bytes and was not handed a compiled module).
 *
 * Where the module comes from is the one thing that differs by build, and `#strip-module` picks
 * it: compiled from the bytes in strip-wasm-bytes.ts (Node, Bun, Deno, browsers), or imported as
 * a compiled `.wasm` module that the bundler hands over (Cloudflare Workers and Vercel's edge,
 * which refuse to compile WebAssembly from bytes at run time).
 *
 * The texts live in the instance's memory: each is valid only until the next call of any kernel.
 */
import { gsonText, stripUnicodeWhitespace } from '../canonical.ts'
import { stripJavaWhitespace, whitespaceJoinsCharacter } from '../strip.ts'

interface Exports {
  memory: WebAssembly.Memory
  /** Where the body goes: after the kernels' lookup tables. */
  input: WebAssembly.Global
  strip(ptr: number, len: number): number
  /** After `strip`: not 0 when a whitespace byte it removed stood right before a continuation byte. */
  joined: WebAssembly.Global
  /** The text's length at `out`; -1 when nothing was escaped, -2 when more than `max` would be. */
  gson(ptr: number, len: number, max: number, out: number): number
  /** 1 when the bytes hold any of Java's whitespace, else 0. */
  scan(ptr: number, len: number): number
  /** The text's length left at `ptr`; -1 when it holds no whitespace beyond Java's six. */
  unicode(ptr: number, len: number): number
}

/** Where a build gets the kernel's compiled module from (`#strip-module`). */
export interface StripModuleSource {
  /** `bytes`: compiled here from strip-wasm-bytes.ts; `import`: a `.wasm` module the bundler linked in. */
  readonly via: 'bytes' | 'import'
  /** The compiled kernel; throws where the runtime will not give one. */
  load(): WebAssembly.Module
}

/**
 * Which stripper removes Java's whitespace: the kernel from an imported module, the kernel
 * compiled from bytes, or the portable JavaScript.
 */
export type StripperKind = 'wasm-import' | 'wasm-bytes' | 'js'

const PAGE = 65536
/**
 * `strip` reads the last, partial block as a whole 16-byte block; `gson` reads up to 3 bytes
 * past the body and stores up to 16 past its text's end. 16 spare bytes serve both.
 */
const SLACK = 16

/**
 * Bodies up to this size go through the one instance, whose memory (WebAssembly memory never
 * shrinks) therefore stays at most this size plus 7 KiB of tables. Larger ones are left to the
 * JavaScript stripper: a throwaway instance per body would reserve fresh address space each
 * time, under load too. (The Gson text is only made for bodies up to 64 KiB, and needs at most
 * three times that.)
 */
export const WASM_STRIP_MAX = 1024 * 1024

/**
 * What a strip tells besides its text. `joins` is true when some whitespace byte it took out stood
 * right before a continuation byte (0x80-0xBF): the text then holds a character its body did not
 * (`E4 20 B8 AD` strips to 中), which signature.ts refuses. Where a body is UTF-8 no whitespace
 * byte stands there, so this is the whole question the stripped text asks of the body's encoding,
 * and the kernel answers it in the pass it makes anyway. `undefined` where the JavaScript stripper
 * ran: a pass of its own would cost every refused body more, so it is asked only once a signature
 * matched (strip.ts, `whitespaceJoinsCharacter`).
 */
export interface StripReport {
  joins: boolean | undefined
}

/**
 * Removes Java's `\s` bytes. The result is the body itself when there was nothing to remove, else
 * a view of WebAssembly memory that is valid only until the next call: the caller hashes it
 * (or hands it to a call that copies it at once) before stripping again, with no `await` in
 * between. With `report`, sets its `joins`.
 */
export type TransientStrip = (body: Uint8Array, report?: StripReport) => Uint8Array

/**
 * The body with Gson's escapes applied and Java's whitespace removed, as canonical.ts's
 * `gsonText(body, maxEscapes)` makes it: `undefined` when nothing would be escaped or more than
 * `maxEscapes` would. From the kernel, the text is a view of WebAssembly memory valid only until
 * the next call of either kernel: the caller hashes it (or copies it) before calling again, with
 * no `await` in between.
 */
export type TransientGson = (body: Uint8Array, maxEscapes: number) => Uint8Array | undefined

/**
 * Whether the bytes hold any of Java's six whitespace bytes, searched in full: a body is hashed
 * as received only when it holds none, and a sample could miss one.
 */
export type WhitespaceSearch = (bytes: Uint8Array) => boolean

/**
 * The body with every Unicode whitespace character removed, as canonical.ts's
 * `stripUnicodeWhitespace` makes it: `undefined` when it holds none beyond Java's six. From the
 * kernel, a view of WebAssembly memory valid only until the next call of any kernel.
 */
export type TransientUnicodeStrip = (body: Uint8Array) => Uint8Array | undefined

/**
 * How both builds search a body with {@link CanonicalStripper.hasWhitespace}: its first
 * `SCAN_PROBE` bytes alone, then `SCAN_CHUNK` at a time. A body with whitespace nearly always
 * shows it in its first bytes (indentation, or the spaces in a Gson text's values), so it is
 * stripped without a whole chunk searched first; a chunk's copy in the kernel's memory stays in
 * cache for the scan (and, on Node, for the hash that follows).
 */
export const SCAN_PROBE = 1024
export const SCAN_CHUNK = 16 * 1024

export interface WasmKernels {
  strip: TransientStrip
  gson: TransientGson
  hasWhitespace: WhitespaceSearch
  unicode: TransientUnicodeStrip
}

/**
 * The kernels over one instance of `load()`'s module, or `undefined` where there is no module or
 * no WebAssembly (e.g. `node --jitless`, or Workers handed bytes instead of a module).
 */
export function createWasmKernels(load: () => WebAssembly.Module): WasmKernels | undefined {
  let exports: Exports
  try {
    exports = new WebAssembly.Instance(load()).exports as unknown as Exports
  } catch {
    return undefined
  }
  const input = exports.input.value as number
  let memory = new Uint8Array(exports.memory.buffer)
  /** Memory up to `need`, and the body copied in at `input`. */
  const copyIn = (body: Uint8Array, need: number) => {
    if (need > memory.length) {
      exports.memory.grow(Math.ceil((need - memory.length) / PAGE))
      // Growing detaches the old buffer: the view must be made again.
      memory = new Uint8Array(exports.memory.buffer)
    }
    memory.set(body, input)
  }
  return {
    strip: (body, report) => {
      copyIn(body, input + body.length + SLACK)
      const length = exports.strip(input, body.length)
      if (report !== undefined) report.joins = exports.joined.value !== 0
      // Nothing removed: the caller's own bytes, which stay valid after the next call.
      return length === body.length ? body : memory.subarray(input, input + length)
    },
    gson: (body, maxEscapes) => {
      // The text goes after the body, 16-byte aligned: the kernel writes it apart from what it reads.
      const out = input + ((body.length + SLACK + 15) & ~15)
      // Room for the most escapes allowed, and the 16 more the kernel may write before it refuses.
      copyIn(body, out + body.length + 5 * (maxEscapes + 16) + SLACK)
      const length = exports.gson(input, body.length, maxEscapes, out)
      return length < 0 ? undefined : memory.subarray(out, out + length)
    },
    // The copy is the price of reading the bytes from WebAssembly at all; the caller hands over
    // a chunk small enough to stay in cache, so its hash reads it from there right after.
    hasWhitespace: (bytes) => {
      copyIn(bytes, input + bytes.length + SLACK)
      return exports.scan(input, bytes.length) !== 0
    },
    unicode: (body) => {
      // Its last block is read whole with the two bytes after it: two more than the others.
      copyIn(body, input + body.length + SLACK + 2)
      // Two spaces after the body: each byte is read with the two after it.
      memory[input + body.length] = 0x20
      memory[input + body.length + 1] = 0x20
      const length = exports.unicode(input, body.length)
      return length < 0 ? undefined : memory.subarray(input, input + length)
    },
  }
}

/** A build's kernels: WebAssembly up to {@link WASM_STRIP_MAX}, made on first use, else JavaScript. */
export interface CanonicalStripper {
  /** Java's whitespace removed, as a {@link TransientStrip}: hash the result before the next call. */
  strip: TransientStrip
  /** The Gson fallback's text, as a {@link TransientGson}: hash (or copy) it before the next call. */
  gson: TransientGson
  /**
   * Whether the bytes hold Java's whitespace: the kernel copies them into its memory (overwriting
   * the last text) and scans them there, up to {@link WASM_STRIP_MAX}; the build's own search
   * above it and without a kernel.
   */
  hasWhitespace: WhitespaceSearch
  /**
   * Every Unicode whitespace character removed, as a {@link TransientUnicodeStrip}: copy it before
   * the next call. canonical.ts tries that form on bodies up to 16 KiB, well within the kernel's bound.
   */
  unicode: TransientUnicodeStrip
  /** Which stripper runs for bodies up to {@link WASM_STRIP_MAX} (making it, if it was not yet). */
  kind(): StripperKind
}

/** `search`: the build's fastest search without the kernel (on Node, one native `memchr` a byte). */
export function createStripper(source: StripModuleSource, search: WhitespaceSearch): CanonicalStripper {
  let kernels: WasmKernels | undefined
  let kind: StripperKind | undefined
  let scratch = new Uint8Array(0)
  // Made on first use, not at import: most deliveries never need them, and a Worker's start-up
  // time counts.
  const make = (): WasmKernels => {
    if (kernels === undefined) {
      const made = createWasmKernels(source.load)
      kind = made === undefined ? 'js' : `wasm-${source.via}`
      kernels = made ?? { strip: stripPortably, gson: gsonText, hasWhitespace: search, unicode: stripUnicodeWhitespace }
    }
    return kernels
  }
  return {
    strip: (body, report) => {
      if (body.length <= WASM_STRIP_MAX) return make().strip(body, report)
      // Reused, as the kernel's memory is: allocating the text afresh cost about one HMAC of a
      // 2 MiB body. It stays as large as the largest body over the bound (at most `maxBodySize`).
      if (scratch.length < body.length) scratch = new Uint8Array(body.length)
      return stripInParts(make().strip, body, scratch, report)
    },
    // canonical.ts bounds the bodies the Gson text is made for (64 KiB), well within the kernels'.
    gson: (body, maxEscapes) => make().gson(body, maxEscapes),
    hasWhitespace: (bytes) => (bytes.length <= WASM_STRIP_MAX ? make().hasWhitespace(bytes) : search(bytes)),
    unicode: (body) => (body.length <= WASM_STRIP_MAX ? make().unicode(body) : stripUnicodeWhitespace(body)),
    kind: () => {
      make()
      return kind as StripperKind
    },
  }
}

/** The JavaScript stripper, which leaves {@link StripReport}'s question to be asked once it matters. */
const stripPortably: TransientStrip = (body, report) => {
  if (report !== undefined) report.joins = undefined
  return stripJavaWhitespace(body)
}

/**
 * A body over {@link WASM_STRIP_MAX} (an app that raised `maxBodySize`), stripped a part at a time
 * through the same stripper, each part's text copied into `out` before the next call: the kernel's
 * memory stays at its bound, and a hostile body of alternating whitespace costs about what it does
 * under the bound, where the JavaScript stripper cost about nine HMACs of it. Java's whitespace is
 * one byte each, so no part's end splits anything. The body itself when nothing was removed, else
 * a view of `out`: transient, as every result of the stripper is.
 */
function stripInParts(strip: TransientStrip, body: Uint8Array, out: Uint8Array, report?: StripReport): Uint8Array {
  let length = 0
  let joins: boolean | undefined = false
  const part: StripReport = { joins: false }
  for (let at = 0; at < body.length; at += WASM_STRIP_MAX) {
    const text = strip(body.subarray(at, at + WASM_STRIP_MAX), part)
    // A part's last byte and the next one's first: no part sees both. A part not looked at (the
    // JavaScript stripper) leaves the whole answer to be asked.
    if (joins === false)
      joins = part.joins === undefined ? undefined : part.joins || (at > 0 && whitespaceJoinsCharacter(body, at - 1, at + 1))
    out.set(text, length)
    length += text.length
  }
  if (report !== undefined) report.joins = joins
  return length === body.length ? body : out.subarray(0, length)
}
