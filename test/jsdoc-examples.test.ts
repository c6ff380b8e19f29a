import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { EXAMPLES_DIR, exampleModules } from '../scripts/lib/jsdoc-examples.ts'

// Every `@example` in the packages' sources is what an editor shows a user on hover, so each must
// compile as written under strict TypeScript. `pnpm typecheck` compiles them, each a module of its
// own in test/jsdoc-examples/ (scripts/lib/jsdoc-examples.ts); here, that those modules are the
// sources' examples as they are now, none missing, none left over.

const modules = exampleModules()

describe('the @example blocks in the packages’ sources', () => {
  it('are found in every package that has them', () => {
    const names = modules.map((module) => module.name)
    for (const pkg of ['core', 'express', 'koa', 'hono', 'fetch', 'emulator', 'client', 'redis', 'bullmq', 'cloudflare']) {
      expect(
        names.some((name) => name.startsWith(`packages/${pkg}/`)),
        pkg,
      ).toBe(true)
    }
  })

  it('each compile under strict TypeScript: pnpm typecheck compiles test/jsdoc-examples/, which holds each as written (pnpm jsdoc:examples)', () => {
    const written = Object.fromEntries(readdirSync(EXAMPLES_DIR).map((file) => [file, readFileSync(join(EXAMPLES_DIR, file), 'utf8')]))
    expect(written).toEqual(Object.fromEntries(modules.map((module) => [module.file, module.text])))
  })
})
