/**
 * `#strip-module` where WebAssembly may be compiled at run time (Node, Bun, Deno, browsers): the
 * kernel compiled from its bytes. `atob` rather than `Buffer`, which the Web build cannot assume.
 */
import { STRIP_WASM_BASE64 } from './strip-wasm-bytes.ts'
import type { StripModuleSource } from './wasm-strip.ts'

export const stripModule: StripModuleSource = {
  via: 'bytes',
  load: () => new WebAssembly.Module(Uint8Array.from(atob(STRIP_WASM_BASE64), (char) => char.charCodeAt(0))),
}
