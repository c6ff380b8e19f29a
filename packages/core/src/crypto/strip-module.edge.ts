/**
 * `#strip-module` on Cloudflare Workers and Vercel's edge (the `workerd` and `edge-light`
 * conditions, the edge build): those runtimes refuse to compile WebAssembly from bytes, but take
 * a `.wasm` file that the bundler links in as a compiled module. wrangler (and the Cloudflare Vite
 * plugin) treat `*.wasm?module` as such a module, and so do Next.js and Vercel for the edge; the
 * package's build keeps this import as it is and puts strip.wasm beside its output.
 *
 * A static import cannot be caught: a bundler with no rule for `.wasm` files fails the build,
 * naming this file (see docs/runtimes.md). One that inlines the bytes instead (esbuild's `binary`
 * loader) still works where bytes may be compiled, and falls back to the JavaScript stripper
 * where they may not.
 */
import compiled from './strip.wasm?module'
import type { StripModuleSource } from './wasm-strip.ts'

/** The kernel from what the bundler made of the import. */
export function importedModule(compiled: unknown): StripModuleSource {
  return {
    via: 'import',
    load: () => {
      // Bytes, where a bundler inlined the file rather than link it as a module (esbuild's binary loader).
      if (ArrayBuffer.isView(compiled)) return new WebAssembly.Module(compiled as Uint8Array<ArrayBuffer>)
      // Otherwise the module, which may come from another realm (Next.js's local edge sandbox
      // compiles it outside the sandbox), where `instanceof WebAssembly.Module` is false: the
      // `WebAssembly.Instance` made of it checks what it is, and refuses anything else (a file
      // name, where a bundler copied the file instead), which leaves the JavaScript stripper.
      return compiled as WebAssembly.Module
    },
  }
}

export const stripModule = importedModule(compiled)
