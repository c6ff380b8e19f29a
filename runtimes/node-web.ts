// @ts-expect-error: the Web build's types are `dist/index.d.ts`; only its identity is needed here.
import * as webBuild from '../packages/core/dist/web/index.js'
import { parseArgs } from './suite/args.ts'
import { checkBuild, checkCore } from './suite/checks.ts'
import { Tally } from './suite/reply.ts'
import { checkStripper } from './suite/stripper.ts'

// The core's Web build on Node, as a bundler that sets the `worker` or `browser` condition gives
// it: the build it resolves, the stripper it uses, Web Crypto's copy at the call, the service's
// signatures. `bundle.ts` bundles this file first, because `node --jitless` (no WebAssembly,
// so the portable JavaScript stripper) cannot strip TypeScript's types:
//
//   node <bundle>/node-web.mjs --stripper=wasm-bytes
//   node --jitless <bundle>/node-web.mjs --stripper=js

const args = parseArgs(process.argv.slice(2))
const stripper = args.stripper
if (stripper !== 'wasm-bytes' && stripper !== 'js') throw new TypeError('node-web.ts: pass --stripper=wasm-bytes or --stripper=js')

const tally = new Tally()
await checkBuild(tally, 'web', webBuild)
await checkStripper(tally, stripper)
await checkCore(tally)
const jitless = process.execArgv.includes('--jitless') ? ' --jitless' : ''
process.exit(tally.report(`node ${process.versions.node}${jitless} (web build)`) === 0 ? 0 : 1)
