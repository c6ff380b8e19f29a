import { fileURLToPath } from 'node:url'
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config'
import core from './packages/core/vitest.config.ts'
import express from './packages/express/vitest.config.ts'
import koa from './packages/koa/vitest.config.ts'
import { LoadFailuresReporter } from './scripts/lib/load-failures-reporter.ts'
import workspace from './vitest.config.ts'

/**
 * The core's tests on both of its builds, and the Node adapters' own: what the mutation run
 * (`stryker.config.mjs`) executes against each mutant. The two projects are the ones `pnpm test`
 * runs, taken from their own configs so they cannot drift apart: `core` resolves `#crypto` to the
 * Node backend, `core-web` to Web Crypto. Each also gets `vitest.mutation.setup.ts`, which skips
 * the suites that read the source text instead of running it.
 */
const SETUP = fileURLToPath(new URL('./vitest.mutation.setup.ts', import.meta.url))

function webProject(): TestProjectInlineConfiguration {
  const found = workspace.test?.projects?.find(
    (project): project is TestProjectInlineConfiguration =>
      typeof project === 'object' && !(project instanceof Promise) && project.test?.name === 'core-web',
  )
  if (!found) throw new Error('vitest.config.ts declares no `core-web` project')
  return found
}

/** `project` rooted at its package (a config file's own folder is no longer implied), with the setup. */
function forMutation(project: TestProjectInlineConfiguration, root = 'packages/core'): TestProjectInlineConfiguration {
  const setupFiles = [project.test?.setupFiles ?? []].flat()
  // Two runners share the cores with Stryker itself: a test that takes 1 s alone can take several,
  // and a timeout in the initial run stops the whole run.
  return { ...project, test: { ...project.test, root, setupFiles: [...setupFiles, SETUP], testTimeout: 30_000 } }
}

/**
 * An adapter's project, reading the core's sources from this tree. Stryker links each package's
 * `node_modules` to the original checkout, so `@hookguard/core/node` would otherwise load the
 * unmutated copy there and no adapter test would ever reach a mutant.
 */
function adapterForMutation(project: TestProjectInlineConfiguration, root: string): TestProjectInlineConfiguration {
  const source = (file: string) => fileURLToPath(new URL(`./packages/core/src/${file}`, import.meta.url))
  const alias = [
    { find: /^@hookguard\/core\/node$/, replacement: source('node.ts') },
    { find: /^@hookguard\/core\/adapter$/, replacement: source('adapter.ts') },
    { find: /^@hookguard\/core$/, replacement: source('index.ts') },
  ]
  const configured = forMutation(project, root)
  return { ...configured, resolve: { ...configured.resolve, alias } }
}

export default defineConfig({
  // Express's and Koa's own tests too: they are what reads a Node request (`@hookguard/core/node`).
  test: {
    // A test file that fails to load stops Stryker's initial run instead of leaving its tests out.
    reporters: ['default', new LoadFailuresReporter()],
    projects: [
      forMutation(core),
      forMutation(webProject()),
      adapterForMutation(express, 'packages/express'),
      adapterForMutation(koa, 'packages/koa'),
    ],
  },
})
