/**
 * Java-`\s` stripping by a WebAssembly SIMD kernel (strip.wat), for the Node build: about ten
 * times the speed of the word-at-a-time JavaScript in canonical.ts, which stays the portable one
 * (Cloudflare Workers refuse to compile WebAssembly from bytes at run time).
 *
 * The kernel works in place in its own memory: the body is copied in once and stripped where it
 * lies, so the one copy is the copy in, and the result is a view of that memory.
 */
import { STRIP_WASM_BASE64 } from './strip-wasm-bytes.ts'

interface Exports {
  memory: WebAssembly.Memory
  /** Where the body goes: after the kernel's lookup tables. */
  input: WebAssembly.Global
  strip(ptr: number, len: number): number
}

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
 * before stripping again, with no `await` in between.
 */
export type TransientStrip = (body: Uint8Array) => Uint8Array

/** The stripper, or `undefined` where WebAssembly is unavailable (e.g. `node --jitless`). */
export function createWasmStrip(): TransientStrip | undefined {
  let exports: Exports
  try {
    const module = new WebAssembly.Module(Buffer.from(STRIP_WASM_BASE64, 'base64'))
    exports = new WebAssembly.Instance(module).exports as unknown as Exports
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
