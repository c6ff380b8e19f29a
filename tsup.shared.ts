import { copyFile, mkdir } from 'node:fs/promises'
import path from 'node:path'
import type { Options } from 'tsup'

type Plugin = NonNullable<Options['esbuildPlugins']>[number]

interface PackageBuild {
  /** Entry files, relative to the package: built as ESM and CommonJS, with type declarations. */
  entry: string[] | Record<string, string>
  /**
   * Command-line entries, relative to the package: ESM only and no declarations, since nothing
   * imports them. Each keeps its shebang and is made executable (`dist/<name>.js`).
   */
  bin?: string[]
  /**
   * Build three times: a Node bundle (resolving `#crypto` and `#bytes` with the `node` condition), a
   * Web bundle for every other runtime, and an edge bundle (ESM only) for Cloudflare Workers and
   * Vercel's edge, where `.wasm?module` imports stay imports. The package's export conditions
   * pick between them.
   */
  conditional?: boolean
  /**
   * The tsconfig the build reads, relative to the package, when the root's `tsconfig.build.json`
   * does not serve: for a package whose sources need an ambient declaration of their own.
   */
  tsconfig?: string
}

const base = {
  format: ['esm', 'cjs'],
  target: 'es2022',
  sourcemap: true,
  splitting: false,
  treeshake: true,
  // Deno and Workers resolve Node built-ins only by their `node:` names.
  removeNodeProtocol: false,
  // The Workers runtime's own modules (`cloudflare:workers`) exist only there, as wrangler leaves them.
  external: [/^cloudflare:/],
  tsconfig: '../../tsconfig.build.json',
} satisfies Options

const WASM_MODULE = '?module'

/**
 * The edge build's `.wasm?module` imports stay imports, for the bundler that builds the user's
 * Worker or edge function to link the file in as a compiled WebAssembly module (wrangler does
 * for `*.wasm` and `*.wasm?module`, Next.js and Vercel for `*.wasm?module`); the file itself is
 * copied beside the output, where the import finds it.
 */
function wasmModules(outDir: string): Plugin {
  return {
    name: 'wasm-modules',
    setup(build) {
      const files = new Set<string>()
      build.onResolve({ filter: /\.wasm\?module$/ }, (args) => {
        const file = path.join(args.resolveDir, args.path.slice(0, -WASM_MODULE.length))
        files.add(file)
        // Every chunk of a build lands in its output folder itself, so one relative path serves all.
        return { path: `./${path.basename(file)}${WASM_MODULE}`, external: true }
      })
      build.onEnd(async () => {
        await mkdir(outDir, { recursive: true })
        for (const file of files) await copyFile(file, path.join(outDir, path.basename(file)))
      })
    },
  }
}

/** The one build policy every package shares; a package names its entries and nothing else. */
export function buildPackage({ entry, bin = [], conditional = false, tsconfig }: PackageBuild): Options[] {
  const common = tsconfig === undefined ? base : { ...base, tsconfig }
  if (!conditional) {
    // The bin build writes into the same folder at the same time, so the library build's clean
    // leaves its files alone; they are overwritten instead.
    const keep = bin.flatMap((file) => {
      const name = file.replace(/^.*\//, '').replace(/\.[cm]?tsx?$/, '')
      return [`!${name}.js`, `!${name}.js.map`]
    })
    const library: Options = { ...common, entry, clean: keep.length > 0 ? keep : true, dts: true }
    if (bin.length === 0) return [library]
    return [library, { ...common, entry: bin, format: ['esm'], platform: 'node', dts: false }]
  }
  if (bin.length > 0) throw new Error('tsup.shared.ts: a conditional build has no bin entries')
  // Several entries share modules (WebhookError above all): split, so that each module exists once
  // per build and `instanceof` holds across entries.
  const shared = { ...common, splitting: true }
  return [
    // Declarations only: one set serves both builds. Its clean removes declarations only.
    { ...common, entry, outDir: 'dist', clean: true, dts: { only: true } },
    {
      ...shared,
      entry,
      outDir: 'dist/node',
      clean: true,
      platform: 'node',
      esbuildOptions: (o) => {
        o.conditions = ['node']
      },
    },
    {
      ...shared,
      entry,
      outDir: 'dist/web',
      clean: true,
      platform: 'neutral',
      esbuildOptions: (o) => {
        o.conditions = ['worker', 'browser']
      },
    },
    {
      ...shared,
      // What wrangler and Next.js build a Worker or an edge function from: ESM.
      format: ['esm'],
      entry,
      outDir: 'dist/edge',
      clean: true,
      platform: 'neutral',
      esbuildOptions: (o) => {
        o.conditions = ['workerd', 'worker', 'browser']
      },
      esbuildPlugins: [wasmModules('dist/edge')],
    },
  ]
}
