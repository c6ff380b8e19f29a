/**
 * Writes every `@example` of the packages' sources into test/jsdoc-examples/ as a module of its
 * own, which `pnpm typecheck` compiles (scripts/lib/jsdoc-examples.ts says why). Run it after
 * adding or editing an example: `pnpm jsdoc:examples`.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { EXAMPLES_DIR, exampleModules } from './lib/jsdoc-examples.ts'

const modules = exampleModules()
mkdirSync(EXAMPLES_DIR, { recursive: true })
const wanted = new Set(modules.map((module) => module.file))
for (const file of readdirSync(EXAMPLES_DIR)) if (!wanted.has(file)) rmSync(join(EXAMPLES_DIR, file))
for (const module of modules) writeFileSync(join(EXAMPLES_DIR, module.file), module.text)
console.log(`wrote ${modules.length} examples into test/jsdoc-examples/`)
