import path from 'node:path'
import { defaultClientConditions, defaultServerConditions, type Plugin } from 'vite'
import type { ViteUserConfig } from 'vitest/config'

/** Inside the repository every package resolves the others' TypeScript sources, not `dist`. */
export const SOURCE_CONDITION = '@hookguard/source'

export const sourceResolution = {
  resolve: { conditions: [SOURCE_CONDITION, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions] } },
} satisfies ViteUserConfig

/**
 * The same sources as a Worker would pick them, so the core's `#crypto` resolves to Web Crypto.
 * Vitest still appends `node` on its server side, so the core's `imports` map lists the Web
 * conditions before `node`.
 */
export const webResolution = {
  resolve: { conditions: [SOURCE_CONDITION, 'module', 'worker', 'browser'] },
  ssr: { resolve: { conditions: [SOURCE_CONDITION, 'module', 'worker', 'browser'] } },
} satisfies ViteUserConfig

const WASM_MODULE = '?module'
const VIRTUAL = '\0wasm-module:'

/**
 * `.wasm?module` imports as the edge's bundlers link them (wrangler, Next.js): the file as a
 * compiled `WebAssembly.Module`. For the core's tests of its edge build's module source.
 */
export const wasmModuleImports: Plugin = {
  name: 'wasm-module-imports',
  enforce: 'pre',
  resolveId(id, importer) {
    if (!id.endsWith(`.wasm${WASM_MODULE}`) || importer === undefined) return undefined
    return VIRTUAL + path.resolve(path.dirname(importer), id.slice(0, -WASM_MODULE.length))
  },
  load(id) {
    if (!id.startsWith(VIRTUAL)) return undefined
    const file = JSON.stringify(id.slice(VIRTUAL.length))
    return `import { readFileSync } from 'node:fs'\nexport default new WebAssembly.Module(readFileSync(${file}))\n`
  },
}
