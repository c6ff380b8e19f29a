/**
 * The packages' `@example` blocks as modules of their own, for `tsc`: each is what an editor shows
 * a user on hover, so each must compile as written under strict TypeScript. An example is wrapped
 * in an async function, after a preamble that provides what it takes from its context: the
 * package's exports, an `app` or `router`, the secrets.
 *
 * The modules are written to test/jsdoc-examples/ (`pnpm jsdoc:examples`), where `pnpm typecheck`
 * compiles them with the rest of the repository; a test fails while they differ from the sources.
 * A type check of their own in the tests loaded the whole workspace's types again for a few dozen
 * lines.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { ROOT } from './packages.ts'

export const EXAMPLES_DIR = join(ROOT, 'test', 'jsdoc-examples')

/** What an example may use without declaring it, per package. */
const PREAMBLES: Record<string, string> = {
  core: `import { createReceiver, sign, verifySignature } from '@hookguard/core'
declare const rawBody: Uint8Array
declare const req: { headers: Record<string, string | undefined> }
declare const request: Request`,
  client: `import { createClient } from '@hookguard/client'`,
  redis: `import { createClient } from '@hookguard/client'
import type { RedisClient } from '../../packages/redis/src/index.ts'
/** Your connected node-redis or ioredis client. */
declare const redis: RedisClient`,
  bullmq: `import express from 'express'
import { webhook } from '@hookguard/express'
import type { DedupeStore } from '@hookguard/core'
import type { HandoffWorkerOptions } from '../../packages/bullmq/src/index.ts'
const app = express()
/** Your BullMQ queues (\`new Queue('webhooks', { connection })\`) and connection; the dedupe store of @hookguard/redis. */
declare const queue: NonNullable<HandoffWorkerOptions['deadLetter']>
declare const deadLetter: NonNullable<HandoffWorkerOptions['deadLetter']>
declare const connection: HandoffWorkerOptions['connection']
declare const store: DedupeStore`,
  cloudflare: `import { type DedupeNamespace, durableObjectDedupeStore, type QueueProducer } from '../../packages/cloudflare/src/index.ts'
/** Your Worker's bindings: the Durable Object namespace of HookguardDedupe, and a queue producer. */
declare const env: { DEDUPE: DedupeNamespace; WEBHOOKS: QueueProducer }
/** Your payload's type, and your Worker's bindings as a type. */
type Order = { orderNo: string }
type Env = { DEDUPE: DedupeNamespace; DB: { save(order: Order): Promise<void> } }`,
  emulator: `import { deliver, mockService, requestToken, sampleEvent, serialize } from '@hookguard/emulator'
import { createClient } from '@hookguard/client'
import { expect } from 'vitest'
declare const url: string
declare const appSecret: string`,
  express: `import express from 'express'
import { tokenEndpoint, webhook } from '@hookguard/express'
const app = express()`,
  fastify: `import Fastify from 'fastify'
import { frameworkErrors, logSerializers, notFoundHandler, requireWebhook, tokenEndpoint, webhook } from '@hookguard/fastify'
const app = Fastify()`,
  koa: `import Router from '@koa/router'
import { tokenEndpoint, webhook } from '@hookguard/koa'
const router = new Router()`,
  fetch: `import { tokenEndpoint, webhook } from '@hookguard/fetch'
/** Your secrets: the process environment, or a Worker's env bindings. */
declare const env: { WEBHOOK_SECRET: string; APP_SECRET: string }`,
  hono: `import { Hono } from 'hono'
import { tokenEndpoint, webhook } from '@hookguard/hono'
const app = new Hono()
/** Your secrets: the process environment on Node, Bun and Deno; c.env bindings on Workers. */
declare const env: { WEBHOOK_SECRET: string; APP_SECRET: string }`,
}

export interface ExampleModule {
  /** Where the example is: package, file and line. */
  name: string
  /** The module's file name in {@link EXAMPLES_DIR}. */
  file: string
  text: string
}

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => {
      const path = join(folder, entry.name)
      if (entry.isDirectory()) return sourceFiles(path)
      return entry.name.endsWith('.ts') ? [path] : []
    })
}

/** The `@example` blocks of a file: the comment lines after the tag, up to the next tag or the end; and their lines. */
function examplesIn(file: string): { line: number; text: string }[] {
  const lines = readFileSync(file, 'utf8').split('\n')
  const found: { line: number; text: string }[] = []
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*\* @example\s*$/.test(lines[i] as string)) continue
    const body: string[] = []
    for (let k = i + 1; k < lines.length && !/^\s*\*\/|^\s*\* @/.test(lines[k] as string); k++) {
      body.push((lines[k] as string).replace(/^\s*\* ?/, ''))
    }
    found.push({ line: i + 1, text: body.join('\n') })
  }
  return found
}

/** Names a module exports that its package's entry may not: an internal function's own example uses it. */
function ownExports(file: string, preamble: string): string[] {
  const names = [...readFileSync(file, 'utf8').matchAll(/^export (?:async )?(?:function|const|class) (\w+)/gm)].map((m) => m[1] as string)
  return names.filter((name) => !new RegExp(`\\b${name}\\b`).test(preamble))
}

/**
 * Every example of every package with a preamble, as the module `tsc` checks. The module names
 * its source file but not the line, so that editing above an example leaves its module as it is.
 */
export function exampleModules(): ExampleModule[] {
  const packages = readdirSync(join(ROOT, 'packages'))
    .filter((name) => name in PREAMBLES)
    .sort()
  return packages.flatMap((pkg) => {
    const preamble = PREAMBLES[pkg] as string
    const files = sourceFiles(join(ROOT, 'packages', pkg, 'src'))
    return files
      .flatMap((file) => examplesIn(file).map((example) => ({ file, ...example })))
      .map(({ file, line, text }, index) => {
        const source = relative(ROOT, file)
        const own = ownExports(file, preamble)
        const imports = own.length > 0 ? `import { ${own.join(', ')} } from '${relative(EXAMPLES_DIR, file)}'\n` : ''
        return {
          name: `${source}:${line}`,
          file: `${pkg}-${index + 1}.ts`,
          text: `// Generated by scripts/jsdoc-examples.ts from an @example in ${source}; do not edit.\n${preamble}\n${imports}\nexport async function example() {\n${text}\n}\n`,
        }
      })
  })
}
