import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

// Every `@example` in the packages' sources is what an editor shows a user on hover, so each must
// compile as written under strict TypeScript. Each is checked in a module of its own, wrapped in
// an async function, after a preamble that provides what the example takes from its context: the
// package's exports, an `app` or `router`, the secrets.

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** What an example may use without declaring it, per package. */
const PREAMBLES: Record<string, string> = {
  core: `import { createReceiver, sign, verifySignature } from '@hookguard/core'
declare const rawBody: Uint8Array
declare const req: { headers: Record<string, string | undefined> }
declare const request: Request`,
  client: `import { createClient } from '@hookguard/client'`,
  redis: `import { createClient } from '@hookguard/client'
import type { RedisClient } from '../packages/redis/src/index.ts'
/** Your connected node-redis or ioredis client. */
declare const redis: RedisClient`,
  bullmq: `import express from 'express'
import { webhook } from '@hookguard/express'
import type { DedupeStore } from '@hookguard/core'
import type { HandoffWorkerOptions } from '../packages/bullmq/src/index.ts'
const app = express()
/** Your BullMQ queues (\`new Queue('webhooks', { connection })\`) and connection; the dedupe store of @hookguard/redis. */
declare const queue: NonNullable<HandoffWorkerOptions['deadLetter']>
declare const deadLetter: NonNullable<HandoffWorkerOptions['deadLetter']>
declare const connection: HandoffWorkerOptions['connection']
declare const store: DedupeStore`,
  cloudflare: `import type { DedupeNamespace } from '../packages/cloudflare/src/index.ts'
/** Your Worker's bindings: the Durable Object namespace of HookguardDedupe. */
declare const env: { DEDUPE: DedupeNamespace }`,
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

interface Example {
  /** Where it is: package, file and line. */
  name: string
  text: string
}

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/** The `@example` blocks of a file: the comment lines after the tag, up to the next tag or the end. */
function examplesIn(file: string): Example[] {
  const lines = readFileSync(file, 'utf8').split('\n')
  const found: Example[] = []
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*\* @example\s*$/.test(lines[i] as string)) continue
    const body: string[] = []
    for (let k = i + 1; k < lines.length && !/^\s*\*\/|^\s*\* @/.test(lines[k] as string); k++) {
      body.push((lines[k] as string).replace(/^\s*\* ?/, ''))
    }
    found.push({ name: `${relative(ROOT, file)}:${i + 1}`, text: body.join('\n') })
  }
  return found
}

/** Names a module exports that its package's entry may not: an internal function's own example uses it. */
function ownExports(file: string, preamble: string): string[] {
  const names = [...readFileSync(file, 'utf8').matchAll(/^export (?:async )?(?:function|const|class) (\w+)/gm)].map((m) => m[1] as string)
  return names.filter((name) => !new RegExp(`\\b${name}\\b`).test(preamble))
}

const packages = readdirSync(join(ROOT, 'packages')).filter((name) => name in PREAMBLES)
const modules = new Map<string, { name: string; text: string }>()
for (const pkg of packages) {
  const preamble = PREAMBLES[pkg] as string
  for (const file of sourceFiles(join(ROOT, 'packages', pkg, 'src'))) {
    examplesIn(file).forEach((example, index) => {
      const own = ownExports(file, preamble)
      const imports = own.length > 0 ? `import { ${own.join(', ')} } from '${file}'\n` : ''
      const path = join(ROOT, 'test', `.jsdoc-example-${pkg}-${modules.size}-${index}.ts`)
      modules.set(path, { name: example.name, text: `${preamble}\n${imports}\nexport async function example() {\n${example.text}\n}\n` })
    })
  }
}

/** Type-checks the examples in memory, against the workspace's sources, with the repository's strict settings. */
function diagnostics(): Map<string, string[]> {
  const base = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  )
  if (base === undefined) throw new Error('tsconfig.json could not be read')
  const options = { ...base.options, noEmit: true, noUnusedLocals: false }
  const host = ts.createCompilerHost(options)
  const readFile = host.readFile.bind(host)
  const getSourceFile = host.getSourceFile.bind(host)
  host.fileExists = (path) => modules.has(path) || ts.sys.fileExists(path)
  host.readFile = (path) => modules.get(path)?.text ?? readFile(path)
  host.getSourceFile = (path, language, onError) => {
    const module = modules.get(path)
    return module === undefined ? getSourceFile(path, language, onError) : ts.createSourceFile(path, module.text, language)
  }
  const program = ts.createProgram([...modules.keys()], options, host)
  const found = new Map<string, string[]>()
  for (const path of modules.keys()) {
    const source = program.getSourceFile(path)
    const messages = ts
      .getPreEmitDiagnostics(program, source)
      .filter((d) => d.file?.fileName === path)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
    found.set(path, messages)
  }
  return found
}

describe('the @example blocks in the packages’ sources', () => {
  it('are found in every package that has them', () => {
    const names = [...modules.values()].map((module) => module.name)
    for (const pkg of ['core', 'express', 'koa', 'hono', 'fetch', 'emulator', 'client', 'redis', 'bullmq', 'cloudflare']) {
      expect(
        names.some((name) => name.startsWith(`packages/${pkg}/`)),
        pkg,
      ).toBe(true)
    }
  })

  it('each compile under strict TypeScript', { timeout: 120_000 }, () => {
    const failures = [...diagnostics()].flatMap(([path, messages]) => messages.map((message) => `${modules.get(path)?.name}: ${message}`))
    expect(failures).toEqual([])
  })
})
