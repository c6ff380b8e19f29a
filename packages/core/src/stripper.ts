import { backend } from '#crypto'
import type { StripperKind } from './crypto/wasm-strip.ts'

export type { StripperKind }

/**
 * Which stripper removes Java's whitespace (the service's canonical form) from bodies up to
 * 1 MiB, on this build and runtime: `'wasm-import'`, the WebAssembly kernel from the `.wasm`
 * module the bundler linked in (Cloudflare Workers, Vercel's edge); `'wasm-bytes'`, the kernel
 * compiled at run time (Node, Bun, Deno, browsers); `'js'`, the portable JavaScript, where
 * neither is possible (`node --jitless`, a Worker built without the module). Larger bodies
 * always take the JavaScript. A diagnostic: every stripper gives the same bytes.
 *
 * @example
 * console.log(whitespaceStripper()) // 'wasm-import' in a Worker bundled by wrangler
 */
export function whitespaceStripper(): StripperKind {
  return backend.stripper()
}
