/**
 * The Node build's WebAssembly kernels (strip.wat), one instance over one memory:
 * - Java-`\s` stripping by a SIMD kernel, about ten times the speed of the word-at-a-time
 *   JavaScript in strip.ts;
 * - the Gson fallback's text (Gson's escapes applied, Java's whitespace removed): about one and
 *   a half HMACs of the body on the worst hostile one, where canonical.ts's JavaScript pass costs
 *   ten (a pass that branches on each byte's kind is as slow on a body that mixes kinds at
 *   random), and a fifth of one on an ordinary body.
 * The JavaScript stays the portable implementation (Cloudflare Workers refuse to compile
 * WebAssembly from bytes at run time, and `node --jitless` has none).
 *
 * Both results live in the instance's memory: each is valid only until the next call of either.
 */
import { STRIP_WASM_BASE64 } from './strip-wasm-bytes.ts'

interface Exports {
  memory: WebAssembly.Memory
  /** Where the body goes: after the kernels' lookup tables. */
  input: WebAssembly.Global
  strip(ptr: number, len: number): number
  /** The text's length at `out`; -1 when nothing was escaped, -2 when more than `max` would be. */
  gson(ptr: number, len: number, max: number, out: number): number
}

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
 * Removes Java's `\s` bytes. The result is the body itself when there was nothing to remove, else
 * a view of WebAssembly memory that is valid only until the next call: the caller hashes it
 * before calling again, with no `await` in between.
 */
export type TransientStrip = (body: Uint8Array) => Uint8Array

/**
 * The body with Gson's escapes applied and Java's whitespace removed, as canonical.ts's
 * `withGsonEscapes(body, true, maxEscapes)` makes it: `undefined` when nothing would be escaped or
 * more than `maxEscapes` would. The text is a view of WebAssembly memory valid only until the next
 * call of either kernel: the caller hashes it (or copies it) before calling again, with no `await`
 * in between.
 */
export type TransientGson = (body: Uint8Array, maxEscapes: number) => Uint8Array | undefined

export interface WasmKernels {
  strip: TransientStrip
  gson: TransientGson
}

/** The kernels, or `undefined` where WebAssembly is unavailable (e.g. `node --jitless`). */
export function createWasmKernels(): WasmKernels | undefined {
  let exports: Exports
  try {
    const module = new WebAssembly.Module(Buffer.from(STRIP_WASM_BASE64, 'base64'))
    exports = new WebAssembly.Instance(module).exports as unknown as Exports
  } catch {
    return undefined
  }
  const input = exports.input.value as number
  let memory = new Uint8Array(exports.memory.buffer)
  /** Memory up to `need`, and the body copied in at `input`. */
  const load = (body: Uint8Array, need: number) => {
    if (need > memory.length) {
      exports.memory.grow(Math.ceil((need - memory.length) / PAGE))
      // Growing detaches the old buffer: the view must be made again.
      memory = new Uint8Array(exports.memory.buffer)
    }
    memory.set(body, input)
  }
  return {
    strip: (body) => {
      load(body, input + body.length + SLACK)
      const length = exports.strip(input, body.length)
      // Nothing removed: the caller's own bytes, which stay valid after the next call.
      return length === body.length ? body : memory.subarray(input, input + length)
    },
    gson: (body, maxEscapes) => {
      // The text goes after the body, 16-byte aligned: the kernel writes it apart from what it reads.
      const out = input + ((body.length + SLACK + 15) & ~15)
      // Room for the most escapes allowed, and the 16 more the kernel may write before it refuses.
      load(body, out + body.length + 5 * (maxEscapes + 16) + SLACK)
      const length = exports.gson(input, body.length, maxEscapes, out)
      return length < 0 ? undefined : memory.subarray(out, out + length)
    },
  }
}
