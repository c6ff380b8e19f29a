import type { Options } from 'tsup'

interface PackageBuild {
  /** Entry files, relative to the package: built as ESM and CommonJS, with type declarations. */
  entry: string[] | Record<string, string>
  /**
   * Command-line entries, relative to the package: ESM only and no declarations, since nothing
   * imports them. Each keeps its shebang and is made executable (`dist/<name>.js`).
   */
  bin?: string[]
  /**
   * Build twice: a Node bundle (resolving `#crypto` and `#bytes` with the `node` condition) and a Web
   * bundle for every other runtime. The package's export conditions pick between them.
   */
  conditional?: boolean
}

const common = {
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

/** The one build policy every package shares; a package names its entries and nothing else. */
export function buildPackage({ entry, bin = [], conditional = false }: PackageBuild): Options[] {
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
  ]
}
