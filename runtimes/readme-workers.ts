import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type DeliverOptions, deliver, EmulatorError, mockService, sampleEvent } from '@hookguard/emulator'
import { build } from 'esbuild'
import { Miniflare } from 'miniflare'
import { deliverAll, type Emulator, ENV } from '../scripts/lib/snippet-deliveries.ts'
import { extractAll, readmeFiles, type Snippet } from '../scripts/lib/snippets.ts'
import { assertEdgeBuild, compiledWasm, WORKER_BUNDLE, type WorkerModule } from './bundle.ts'
import type { Tally } from './suite/reply.ts'

// The READMEs' Workers (`<!-- snippet: file env=workers deliver=… -->`, compiled by
// `pnpm test:snippets`), run here the way a user deploys them: read from the Markdown, bundled
// as wrangler would (the Worker conditions, the workspace's builds), started in workerd with the
// compatibility date and flags of a README's wrangler.jsonc (the snippet's own README's, else the
// first README's that has one), the Durable Objects that its own README's wrangler.jsonc binds and
// the snippets' bindings, and delivered to over HTTP by the emulator, genuine and tampered. Called
// by workerd.ts, into its tally.

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.dirname(here)

/** What is read of a README's wrangler.jsonc. */
interface WranglerConfig {
  compatibility_date: string
  compatibility_flags?: string[]
  main?: string
  durable_objects?: { bindings?: { name: string; class_name: string }[] }
  migrations?: { new_sqlite_classes?: string[] }[]
}

export async function checkReadmeWorkers(tally: Tally): Promise<void> {
  const { snippets } = extractAll(root)
  const workers = snippets.filter((s) => s.env === 'workers' && s.kind === 'file' && s.deliveries.length > 0)
  let configs: Map<string, WranglerConfig> | undefined
  await tally.check('READMEs: a wrangler.jsonc with a compatibility date and no nodejs_compat, and a Worker to run', async () => {
    configs = await wranglerConfigs()
    for (const [readme, config] of configs) {
      if (config.compatibility_flags?.some((flag) => flag.startsWith('nodejs_compat'))) {
        throw new Error(`${readme} asks for nodejs_compat, which the packages do not need`)
      }
    }
    if (workers.length === 0) throw new Error('no <!-- snippet: file env=workers deliver=… --> block in the READMEs')
  })
  if (configs === undefined) return
  const first = configs.values().next().value as WranglerConfig
  for (const snippet of workers) {
    const own = configs.get(snippet.readme)
    await tally.check(
      `README Worker ${snippet.readme}:${snippet.line} in workerd: ${snippet.deliveries.map((d) => d.mode).join(', ')}`,
      () =>
        runWorker(snippet, own ?? { compatibility_date: first.compatibility_date, compatibility_flags: first.compatibility_flags ?? [] }),
    )
  }
}

/** The first wrangler.jsonc block (one with a compatibility_date) of each README that has one, in README order. */
async function wranglerConfigs(): Promise<Map<string, WranglerConfig>> {
  const configs = new Map<string, WranglerConfig>()
  for (const readme of readmeFiles(root)) {
    const text = await readFile(path.join(root, readme), 'utf8')
    const block = /```jsonc\n([\s\S]*?)\n```/.exec(text)?.[1]
    if (block === undefined || !block.includes('"compatibility_date"')) continue
    // JSON with comments: the comments here are whole lines.
    const json = block.replace(/^\s*\/\/.*$/gm, '').replace(/,\s*([}\]])/g, '$1')
    configs.set(readme, JSON.parse(json) as WranglerConfig)
  }
  if (configs.size === 0) throw new Error('no wrangler.jsonc block with a compatibility_date in the READMEs')
  return configs
}

/** The config's Durable Object bindings as miniflare takes them: SQLite storage for a class its migrations create so. */
function durableObjects(config: WranglerConfig): Record<string, { className: string; useSQLite: boolean }> {
  const sqlite = new Set(config.migrations?.flatMap((migration) => migration.new_sqlite_classes ?? []))
  return Object.fromEntries(
    (config.durable_objects?.bindings ?? []).map(({ name, class_name }) => [
      name,
      { className: class_name, useSQLite: sqlite.has(class_name) },
    ]),
  )
}

async function runWorker(snippet: Snippet, config: WranglerConfig): Promise<void> {
  const mf = new Miniflare({
    modules: await bundle(snippet),
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags ?? [],
    // What `wrangler secret put` and .dev.vars would give it.
    bindings: { ...ENV },
    durableObjects: durableObjects(config),
    host: '127.0.0.1',
    port: 0,
  })
  // The checks build the options per mode; the emulator checks them again when it delivers.
  const emulator: Emulator = {
    deliver: (options) => deliver(options as unknown as DeliverOptions),
    sampleEvent,
    mockService,
    EmulatorError,
  }
  try {
    const url = await mf.ready
    await deliverAll(snippet, url.origin, emulator, AbortSignal.timeout(60_000))
  } finally {
    await mf.dispose().catch(() => undefined)
  }
}

/**
 * The snippet as wrangler would bundle it: ESM, the Worker conditions, no Node built-ins, the core's
 * edge build with its WebAssembly module; as miniflare takes it, the script and that module.
 */
async function bundle(snippet: Snippet): Promise<WorkerModule[]> {
  const wasm = new Map<string, string>()
  const result = await build({
    stdin: { contents: snippet.code, loader: 'ts', resolveDir: here, sourcefile: `${snippet.id}.ts` },
    ...WORKER_BUNDLE,
    plugins: [compiledWasm(wasm)],
    write: false,
  })
  assertEdgeBuild(result.metafile, wasm)
  return [
    { type: 'ESModule', path: 'worker.mjs', contents: result.outputFiles[0]?.text ?? '' },
    ...(await Promise.all(
      [...wasm].map(async ([name, file]) => ({
        type: 'CompiledWasm' as const,
        path: name,
        contents: new Uint8Array(await readFile(file)),
      })),
    )),
  ]
}
