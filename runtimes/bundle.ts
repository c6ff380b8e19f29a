import { copyFile, readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Options } from 'tsup'

/** How a Worker resolves packages: no `node` condition, and `workerd` first, so the core's edge build. */
export const WORKER_CONDITIONS = ['workerd', 'worker', 'browser']

/**
 * How a Worker is bundled, as wrangler does: ESM, the Worker conditions, no Node built-in
 * resolvable or external; only the runtime's own modules (`cloudflare:workers`) and the
 * WebAssembly modules ({@link compiledWasm}) stay imports.
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
export type Plugin = NonNullable<Options['esbuildPlugins']>[number]

/**
 * `.wasm` imports as wrangler takes them by default (its module rule `CompiledWasm` for
 * `**\/*.wasm` and `**\/*.wasm?module`): each file stays an import, of a module of the Worker's own
 * named by the file's name, which workerd hands over compiled. `found` collects name → file.
 */
export function compiledWasm(found: Map<string, string>): Plugin {
  return {
    name: 'compiled-wasm',
    setup(build) {
      build.onResolve({ filter: /\.wasm(\?module)?$/ }, (args) => {
        const file = path.resolve(args.resolveDir, args.path.replace(/\?module$/, ''))
        const name = path.basename(file)
        const known = found.get(name)
        if (known !== undefined && known !== file) throw new Error(`bundle.ts: two WebAssembly modules named ${name}: ${known}, ${file}`)
        found.set(name, file)
        return { path: `./${name}`, external: true }
      })
    },
  }
}

/** A bundled Worker's modules as miniflare takes them: the script (ESM) and each WebAssembly module it imports. */
export type WorkerModule =
  | { type: 'ESModule'; path: string; contents: string }
  | { type: 'CompiledWasm'; path: string; contents: Uint8Array }

/** The Worker at `script` (its text) and the `.wasm` files beside it that it imports. */
export async function workerModules(scriptPath: string): Promise<WorkerModule[]> {
  const script = await readFile(scriptPath, 'utf8')
  const names = [...script.matchAll(/^import \w+ from "\.\/([^"/]+\.wasm)";$/gm)].map((match) => match[1] as string)
  return [
    // By content, not by path: the bundle lives in a temporary folder outside this one.
    { type: 'ESModule', path: 'worker.mjs', contents: script },
    ...(await Promise.all(
      names.map(async (name) => ({
        type: 'CompiledWasm' as const,
        path: name,
        contents: new Uint8Array(await readFile(path.join(path.dirname(scriptPath), name))),
      })),
    )),
  ]
}

/** The part of esbuild's metafile the checks below read. */
export interface Metafile {
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
 * Bundles `entry` (default `worker.ts`; relative to this folder) into `outDir/<its name>.mjs` as a
 * Worker is built (no `node` condition), with the WebAssembly modules it imports beside it, and
 * proves from the metafile which core it holds. Returns the bundle's path; {@link workerModules}
 * reads it back. `plugins` come before the bundle's own.
 */
export async function bundleWorker(outDir: string, entry = 'worker.ts', plugins: Plugin[] = []): Promise<string> {
  const outfile = path.join(outDir, path.basename(entry).replace(/\.ts$/, '.mjs'))
  const wasm = new Map<string, string>()
  const { metafile } = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [path.resolve(here, entry)],
    outfile,
    ...WORKER_BUNDLE,
    plugins: [...plugins, tableShims, compiledWasm(wasm)],
  })
  assertEdgeBuild(metafile, wasm)
  for (const [name, file] of wasm) await copyFile(file, path.join(outDir, name))
  return outfile
}

/**
 * Bundles `entry` for Node into `outDir/<its name>.mjs` with the `worker` and `browser` conditions
 * before Node's own, so with the core's Web build (proved from the metafile), as a bundler for
 * those conditions would; Node built-ins stay imports. Returns the bundle's path.
 */
export async function bundleForNode(outDir: string, entry: string): Promise<string> {
  const outfile = path.join(outDir, entry.replace(/\.ts$/, '.mjs'))
  const { metafile } = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [path.join(here, entry)],
    outfile,
    bundle: true,
    format: 'esm',
    target: 'es2022',
    platform: 'node',
    conditions: ['worker', 'browser'],
    metafile: true,
    logLevel: 'silent',
  })
  const files = Object.keys(metafile.inputs).map((file) => file.split(path.sep).join('/'))
  const cores = [...new Set(files.flatMap((file) => /packages\/core\/dist\/(\w+)\//.exec(file)?.[1] ?? []))]
  if (cores.join() !== 'web')
    throw new Error(`bundle.ts: ${entry} holds the core's ${cores.join(' and ') || 'no'} build, not its Web build alone`)
  return outfile
}

/**
 * The core's edge build is in the bundle, and no other (the Web build would strip in JavaScript
 * there: workerd compiles no WebAssembly from bytes); no package source, and nothing left to
 * import at run time but `cloudflare:` modules and the WebAssembly modules the Worker carries.
 */
export function assertEdgeBuild({ inputs, outputs }: Metafile, wasm: ReadonlyMap<string, string>): void {
  const files = Object.keys(inputs).map((file) => file.split(path.sep).join('/'))
  const problems = [
    files.some((file) => file.endsWith('packages/core/dist/edge/index.js'))
      ? undefined
      : 'the core edge build (packages/core/dist/edge/index.js) is not in the bundle',
    ...files
      .filter((file) => /packages\/core\/dist\/(node|web)\//.test(file))
      .map((file) => `another build of the core than the edge build is in the bundle: ${file}`),
    ...files
      .filter((file) => /^packages\/[^/]+\/src\//.test(file))
      .map((file) => `a package's source, not its dist, is in the bundle: ${file}`),
    ...Object.values(outputs).flatMap(({ imports }) =>
      imports
        .filter((i) => i.external && !i.path.startsWith('cloudflare:') && !wasm.has(i.path.replace(/^\.\//, '')))
        .map((i) => `the bundle imports ${i.path} at run time`),
    ),
    wasm.has('strip.wasm') ? undefined : 'the core edge build’s strip.wasm is not among the Worker’s modules',
  ].filter((problem) => problem !== undefined)
  if (problems.length > 0) throw new Error(`bundle.ts: ${problems.join('; ')}`)
}
