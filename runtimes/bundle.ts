import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Options } from 'tsup'

/** How a Worker resolves packages: no `node` condition, so the core's Web build. */
export const WORKER_CONDITIONS = ['workerd', 'worker', 'browser']

/**
 * How a Worker is bundled, as wrangler does: ESM, the Worker conditions, no Node built-in
 * resolvable or external; only the runtime's own modules (`cloudflare:workers`) stay imports.
 */
export const WORKER_BUNDLE = {
  bundle: true,
  external: ['cloudflare:*'],
  format: 'esm' as const,
  target: 'es2022',
  platform: 'neutral' as const,
  conditions: WORKER_CONDITIONS,
  mainFields: ['module', 'main'],
  metafile: true as const,
  logLevel: 'silent' as const,
}

type BuildOptions = Parameters<NonNullable<Options['esbuildOptions']>>[0]
type Plugin = NonNullable<Options['esbuildPlugins']>[number]

/** The part of esbuild's metafile the checks below read. */
interface Metafile {
  inputs: Record<string, unknown>
  outputs: Record<string, { imports: { path: string; external?: boolean }[] }>
}

interface Esbuild {
  build(options: BuildOptions & { metafile: true }): Promise<{ metafile: Metafile }>
}

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.dirname(here)
// esbuild is the one tsup bundles the packages with; resolving it through tsup keeps one copy.
const esbuild = createRequire(createRequire(import.meta.url).resolve('tsup'))('esbuild') as Esbuild

const CONFORMANCE_TABLE = path.join(root, 'test/conformance/cases.ts')
const TABLE_SHIMS: Record<string, string> = {
  'node:zlib': path.join(here, 'shims/zlib.ts'),
}
const BUFFER_SHIM = path.join(here, 'shims/buffer.ts')

/**
 * The conformance table imports `node:zlib` and uses the `Buffer` global; only the
 * table gets the shims. Any other module that reaches for a Node built-in still fails the build,
 * and one that uses `Buffer` still fails in workerd, which is the point.
 */
const tableShims: Plugin = {
  name: 'conformance-table-shims',
  setup(build) {
    build.onResolve({ filter: /^(vitest|node:zlib)$/ }, (args) =>
      args.importer === CONFORMANCE_TABLE ? { path: TABLE_SHIMS[args.path] as string } : undefined,
    )
    build.onLoad({ filter: /[\\/]cases\.ts$/ }, async (args) => {
      if (args.path !== CONFORMANCE_TABLE) return undefined
      const source = await readFile(args.path, 'utf8')
      return { contents: `import { Buffer } from ${JSON.stringify(BUFFER_SHIM)}\n${source}`, loader: 'ts' }
    })
  },
}

/**
 * Bundles `entry` (default `worker.ts`) into `outDir/<its name>.mjs` as a Worker is built (no
 * `node` condition) and proves from the metafile which core it holds. Returns the bundle's path.
 */
export async function bundleWorker(outDir: string, entry = 'worker.ts'): Promise<string> {
  const outfile = path.join(outDir, entry.replace(/\.ts$/, '.mjs'))
  const { metafile } = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [path.join(here, entry)],
    outfile,
    ...WORKER_BUNDLE,
    plugins: [tableShims],
  })
  assertWebBuild(metafile)
  return outfile
}

function assertWebBuild({ inputs, outputs }: Metafile): void {
  const files = Object.keys(inputs).map((file) => file.split(path.sep).join('/'))
  const problems = [
    files.includes('packages/core/dist/web/index.js')
      ? undefined
      : 'the core Web build (packages/core/dist/web/index.js) is not in the bundle',
    ...files.filter((file) => file.startsWith('packages/core/dist/node/')).map((file) => `the core's Node build is in the bundle: ${file}`),
    ...files
      .filter((file) => /^packages\/[^/]+\/src\//.test(file))
      .map((file) => `a package's source, not its dist, is in the bundle: ${file}`),
    ...Object.values(outputs).flatMap(({ imports }) =>
      imports.filter((i) => i.external && !i.path.startsWith('cloudflare:')).map((i) => `the bundle imports ${i.path} at run time`),
    ),
  ].filter((problem) => problem !== undefined)
  if (problems.length > 0) throw new Error(`bundle.ts: ${problems.join('; ')}`)
}
