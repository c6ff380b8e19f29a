import type { Options } from 'tsup'

interface PackageBuild {
  /** Entry files, relative to the package. */
  entry: string[]
  /**
   * Build twice: a Node bundle (resolving `#crypto` with the `node` condition) and a Web
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
  tsconfig: '../../tsconfig.base.json',
} satisfies Options

/** The one build policy every package shares; a package names its entries and nothing else. */
export function buildPackage({ entry, conditional = false }: PackageBuild): Options[] {
  if (!conditional) return [{ ...common, entry, clean: true, dts: true }]
  return [
    { ...common, entry, outDir: 'dist', clean: true, dts: { only: true } },
    {
      ...common,
      entry,
      outDir: 'dist/node',
      platform: 'node',
      esbuildOptions: (o) => {
        o.conditions = ['node']
      },
    },
    {
      ...common,
      entry,
      outDir: 'dist/web',
      platform: 'neutral',
      esbuildOptions: (o) => {
        o.conditions = ['worker', 'browser']
      },
    },
  ]
}
