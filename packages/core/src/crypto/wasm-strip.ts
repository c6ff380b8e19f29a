/**
 * Java-`\s` stripping by a WebAssembly SIMD kernel (strip.wat), for both builds: about ten times
 * the speed of the word-at-a-time JavaScript in strip.ts, which stays the fallback where no
 * WebAssembly module can be had (`node --jitless`, a runtime that refuses to compile bytes and
 * was not handed a compiled module).
 *
 * Where the module comes from is the one thing that differs by build, and `#strip-module` picks
 * it: compiled from the bytes in strip-wasm-bytes.ts (Node, Bun, Deno, browsers), or imported as
 * a compiled `.wasm` module that the bundler hands over (Cloudflare Workers and Vercel's edge,
 * which refuse to compile WebAssembly from bytes at run time).
 *
 * The kernel works in place in its own memory: the body is copied in once and stripped where it
 * lies, so the one copy is the copy in, and the result is a view of that memory.
 */
import { stripJavaWhitespace } from '../strip.ts'

interface Exports {
  memory: WebAssembly.Memory
  /** Where the body goes: after the kernel's lookup tables. */
  input: WebAssembly.Global
  strip(ptr: number, len: number): number
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
/** The kernel reads the last, partial block as a whole 16-byte block. */
const SLACK = 16

/**
 * Bodies up to this size go through the one instance, whose memory (WebAssembly memory never
 * shrinks) therefore stays at most this size plus 4 KiB of tables. Larger ones are left to the
 * JavaScript stripper: a throwaway instance per body would reserve fresh address space each
 * time, under load too.
 */
export const WASM_STRIP_MAX = 1024 * 1024

/**
 * Removes Java's `\s` bytes. The result is the body itself when there was nothing to remove, else
 * a view of WebAssembly memory that is valid only until the next call: the caller hashes it
 * (or hands it to a call that copies it at once) before stripping again, with no `await` in
 * between.
 */
export type TransientStrip = (body: Uint8Array) => Uint8Array

/**
 * The kernel's stripper over one instance of `load()`'s module, or `undefined` where there is no
 * module or no WebAssembly (e.g. `node --jitless`, or Workers handed bytes instead of a module).
 */
export function createWasmStrip(load: () => WebAssembly.Module): TransientStrip | undefined {
  let exports: Exports
  try {
    exports = new WebAssembly.Instance(load()).exports as unknown as Exports
  } catch {
    return undefined
  }
  const input = exports.input.value as number
  let memory = new Uint8Array(exports.memory.buffer)
  return (body) => {
    const need = input + body.length + SLACK
    if (need > memory.length) {
      exports.memory.grow(Math.ceil((need - memory.length) / PAGE))
      // Growing detaches the old buffer: the view must be made again.
      memory = new Uint8Array(exports.memory.buffer)
    }
    memory.set(body, input)
    const length = exports.strip(input, body.length)
    // Nothing removed: the caller's own bytes, which stay valid after the next call.
    return length === body.length ? body : memory.subarray(input, input + length)
  }
}

/** A build's stripper: the kernel up to {@link WASM_STRIP_MAX}, made on first use, else JavaScript. */
export interface CanonicalStripper {
  /** Java's whitespace removed, as a {@link TransientStrip}: hash the result before the next call. */
  strip: TransientStrip
  /** Which stripper runs for bodies up to {@link WASM_STRIP_MAX} (making it, if it was not yet). */
  kind(): StripperKind
}

export function createStripper(source: StripModuleSource): CanonicalStripper {
  let wasm: TransientStrip | undefined
  let kind: StripperKind | undefined
  // Made on first use, not at import: most deliveries never need it, and a Worker's start-up
  // time counts.
  const make = (): TransientStrip => {
    if (wasm === undefined) {
      const made = createWasmStrip(source.load)
      kind = made === undefined ? 'js' : `wasm-${source.via}`
      wasm = made ?? stripJavaWhitespace
    }
    return wasm
  }
  return {
    strip: (body) => (body.length > WASM_STRIP_MAX ? stripJavaWhitespace(body) : make()(body)),
    kind: () => {
      make()
      return kind as StripperKind
    },
  }
}
