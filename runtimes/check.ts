import { parseArgs } from './suite/args.ts'
import { runPortable } from './suite/portable.ts'
import { runtimeName } from './suite/runtime-name.ts'
import { checkServed } from './suite/served.ts'

// Bun and Deno run this file as it is, from this folder, and resolve `@hookguard/*` through
// `runtimes/node_modules` and the packages' export conditions; `--build` says which core build
// that must give. By default both pick the Node build (`bun`/`deno` conditions); with the Worker
// condition they must pick the Web build:
//
//   bun check.ts --build=node --mock=http://127.0.0.1:<port>
//   bun --conditions=worker check.ts --build=web --mock=…
//   deno run --allow-net=127.0.0.1 --allow-env --allow-read [--conditions=worker] check.ts --build=…

const args = parseArgs(process.argv.slice(2))
const build = args.build
if (build !== 'node' && build !== 'web') throw new TypeError('check.ts: pass --build=node or --build=web')

const reference: { sign?: unknown } = await import(new URL(`../packages/core/dist/${build}/index.js`, import.meta.url).href)
// Both builds compile the WebAssembly kernel from its bytes on Bun and Deno.
const tally = await runPortable({ build, reference, mockUrl: args.mock, stripper: 'wasm-bytes' })
await checkServed(tally, runtimeName())
process.exit(tally.report(`${runtimeName()} (${build} build)`) === 0 ? 0 : 1)
