/**
 * Installs the packed packages the way a user would, outside the repository, and uses them:
 *
 * - `esm/`: `"type": "module"`, .mjs: core + Hono adapter + client + emulator (ESM builds);
 * - `cjs/`: `require()`: core + Express adapter (Express 5 and 4) + emulator (CommonJS builds),
 *   and the `hookguard` bin;
 * - `ts-node16/`: TypeScript, `module`/`moduleResolution` `node16`: an ESM file with the Koa adapter
 *   (Koa 3 and 2) and a .cts file with the Express adapter (the .d.cts declarations), type-checked,
 *   emitted by tsc and run with node;
 * - `ts-bundler/`: TypeScript, `module: esnext`, `moduleResolution: bundler`: core + Hono + client,
 *   type-checked, emitted and run;
 * - `ts-koa/` and `ts-koa-bodyparser/`: what the Koa adapter declares on `ctx.request` type-checks
 *   alone, and beside the declarations of @koa/bodyparser and koa-bodyparser's @types;
 * - a second folder with only core and redis installed (no @hookguard/client, an optional peer):
 *   a dedupe-only app and the token store type-check, with and without `skipLibCheck`;
 * - which build each export condition picks (`node --conditions=…`; the edge build's `.wasm?module`
 *   linked by a module hook, as a bundler would), which whitespace stripper it runs, and, where the
 *   workspace has them installed (runtimes/), which build Bun and Deno pick and that it verifies there.
 *
 * One `npm install` of the tarballs and the frameworks (from the registry, `--prefer-offline`)
 * serves all four projects, which resolve from the temporary folder's node_modules. Bounded by
 * one deadline (HOOKGUARD_CONSUMER_TIMEOUT seconds, default 300); the temporary folder is removed
 * at the end (kept with --keep). Run after `pnpm build`: `pnpm test:consumer`.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { packAll, publicPackages, ROOT, type RunResult, run, tail } from './lib/packages.ts'

const TIMEOUT_S = Number(process.env.HOOKGUARD_CONSUMER_TIMEOUT ?? 300)
const KEEP = process.argv.includes('--keep')
const SECRET = 'whsec-consumer-3b8f'
/** Versions for the projects' own dependencies; typescript and @types/node as in the workspace. */
const rootManifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }
const INSTALL = [
  'express@^5',
  'express4@npm:express@^4',
  'koa@^3',
  'koa2@npm:koa@^2',
  'hono@^4',
  'fastify@^5',
  `typescript@${rootManifest.devDependencies.typescript}`,
  `@types/node@${rootManifest.devDependencies['@types/node']}`,
  '@types/express@^5',
  '@types/koa@^3',
  // @types/koa reads content-disposition's types from @types/content-disposition; from 2.0 the
  // package ships its own, without the Options @types/koa names. Koa itself uses ~1.0, Express
  // gets its newer one nested.
  'content-disposition@~1.0.1',
  // Body parsers that declare ctx.request.body and rawBody, as @hookguard/koa does.
  '@koa/bodyparser@^6',
  'koa-bodyparser@^4',
  '@types/koa-bodyparser@^4',
]
/** The second project: @hookguard/redis without the optional @hookguard/client. */
const REDIS_ONLY_INSTALL = [
  'redis@^5',
  `typescript@${rootManifest.devDependencies.typescript}`,
  `@types/node@${rootManifest.devDependencies['@types/node']}`,
]

const started = Date.now()
const signal = AbortSignal.timeout(TIMEOUT_S * 1000)
const workdir = mkdtempSync(join(tmpdir(), 'hookguard-consumer-'))
// Apart from workdir: nothing of workdir/node_modules may be found from here.
const redisOnly = mkdtempSync(join(tmpdir(), 'hookguard-consumer-redis-'))
let passed = 0
let failed = 0

async function check(name: string, body: () => Promise<string | undefined>): Promise<void> {
  const t = Date.now()
  try {
    const detail = await body()
    passed++
    console.log(`✓ ${name} (${((Date.now() - t) / 1000).toFixed(1)} s)${detail ? `: ${detail}` : ''}`)
  } catch (error) {
    failed++
    const message = signal.aborted
      ? `timed out (HOOKGUARD_CONSUMER_TIMEOUT=${TIMEOUT_S})`
      : error instanceof Error
        ? error.message
        : String(error)
    console.log(`✗ ${name}\n    ${message.replaceAll('\n', '\n    ')}`)
  }
}

/** Runs a command in the temporary folder; throws with its output unless it exits 0. */
async function sh(cwd: string, command: string, args: string[], input?: string): Promise<RunResult> {
  const result = await run(command, args, { cwd: join(workdir, cwd), signal, input })
  if (result.code !== 0) throw new Error(`${[command, ...args].join(' ')} exited ${result.code}\n${tail(result)}`)
  return result
}

/**
 * Type-checks and emits a project with `skipLibCheck: false`, so our declarations are checked too.
 * An error inside another package's declarations is not ours to fix (e.g. @types/koa 3 against
 * the types content-disposition 1.x ships), so it is shown but does not fail the check; one in
 * the project's sources or in @hookguard/* declarations does.
 */
async function tsc(project: string, root = workdir, extra: string[] = []): Promise<string | undefined> {
  const tscBin = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  const result = await run('node', [tscBin, '-p', 'tsconfig.json', ...extra], { cwd: join(root, project), signal })
  if (result.code === 0) return undefined
  const errors = result.stdout.split('\n').filter((line) => /error TS\d+/.test(line))
  const foreign = errors.filter((line) => line.includes('node_modules/') && !line.includes('node_modules/@hookguard/'))
  if (errors.length === 0 || foreign.length < errors.length) throw new Error(`tsc exited ${result.code}\n${tail(result)}`)
  return `${foreign.length} error(s) in third-party declarations ignored:\n    ${foreign.join('\n    ')}`
}

function write(path: string, text: string): void {
  const file = join(workdir, path)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, text)
}

try {
  const tarballs = new Map<string, string>()
  await check('pack every package', async () => {
    mkdirSync(join(workdir, 'tarballs'))
    for (const [name, file] of await packAll(join(workdir, 'tarballs'), signal)) tarballs.set(name, file)
    return [...tarballs.keys()].join(', ')
  })

  writeProjects()
  let installed = false
  await check('npm install the tarballs with express, koa, hono, fastify', async () => {
    if (tarballs.size !== publicPackages().length) throw new Error('not every package was packed')
    await sh('.', 'npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs.values(), ...INSTALL])
    installed = true
    return `${tarballs.size} tarballs and ${INSTALL.length} registry packages`
  })
  if (!installed) throw new Error('install failed; nothing to test')

  await check('esm: import core, hono, fastify, fetch, redis, client, emulator; verify; Node build picked', async () => {
    return (await sh('esm', 'node', ['test.mjs'])).stdout.trim()
  })
  await check('cjs: require core, express (5 and 4), fastify, emulator; verify; Node build picked', async () => {
    return (await sh('cjs', 'node', ['test.cjs'])).stdout.trim()
  })
  await check('cjs: the hookguard bin signs like the core', async () => {
    const bin = join(workdir, 'node_modules', '.bin', 'hookguard')
    const body = '{"event": "ping", "id": 1}'
    const signed = await run(bin, ['sign'], {
      cwd: join(workdir, 'cjs'),
      signal,
      input: body,
      env: { ...process.env, HOOKGUARD_SECRET: SECRET },
    })
    if (signed.code !== 0) throw new Error(`hookguard sign exited ${signed.code}\n${tail(signed)}`)
    const expected = (
      await sh('cjs', 'node', ['-e', `require('@hookguard/core').sign(${JSON.stringify(body)}, '${SECRET}').then(console.log)`])
    ).stdout
    if (signed.stdout.trim() !== expected.trim()) throw new Error(`bin printed ${signed.stdout.trim()}, core signs ${expected.trim()}`)
    return signed.stdout.trim()
  })
  await check('ts-node16: tsc type-checks ESM (.ts) and CommonJS (.cts) consumers', () => tsc('ts-node16'))
  await check('ts-node16: the emitted ESM (koa 3 and 2) and CommonJS (express) run', async () => {
    const esm = (await sh('ts-node16', 'node', ['out/index.js'])).stdout.trim()
    const cjs = (await sh('ts-node16', 'node', ['out/require.cjs'])).stdout.trim()
    return `${esm}; ${cjs}`
  })
  await check('ts-bundler: tsc type-checks with moduleResolution bundler', () => tsc('ts-bundler'))
  await check('ts-bundler: the emitted program runs', async () => {
    return (await sh('ts-bundler', 'node', ['out/index.js'])).stdout.trim()
  })
  // Two programs each, side by side: tsc uses one core.
  await Promise.all([
    check('ts-koa: ctx.request.body and rawBody typed by @hookguard/koa alone', () => tsc('ts-koa')),
    check('ts-koa-bodyparser: @hookguard/koa beside @koa/bodyparser and @types/koa-bodyparser, skipLibCheck false', () =>
      tsc('ts-koa-bodyparser'),
    ),
  ])
  await check('redis without @hookguard/client: npm install core and redis only', async () => {
    const core = tarballs.get('@hookguard/core')
    const redis = tarballs.get('@hookguard/redis')
    if (core === undefined || redis === undefined) throw new Error('core or redis was not packed')
    writeRedisOnly()
    const args = ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', core, redis, ...REDIS_ONLY_INSTALL]
    const result = await run('npm', args, { cwd: redisOnly, signal })
    if (result.code !== 0) throw new Error(`npm install exited ${result.code}\n${tail(result)}`)
    if (existsSync(join(redisOnly, 'node_modules', '@hookguard', 'client'))) throw new Error('@hookguard/client was installed')
    return `${REDIS_ONLY_INSTALL.length} registry packages, no @hookguard/client`
  })
  await Promise.all([
    check('redis without @hookguard/client: the dedupe store and the token store type-check, skipLibCheck false', () =>
      tsc('app', redisOnly),
    ),
    check('redis without @hookguard/client: the token store is typed, not any, with skipLibCheck', () =>
      tsc('app', redisOnly, ['--skipLibCheck']),
    ),
  ])
  await check(
    'conditions: edge-light, workerd → edge build; worker, browser → Web build; bun, deno, node → Node build; each verifies',
    async () => {
      const picks: string[] = []
      for (const [condition, build] of [
        ['edge-light', 'edge'],
        ['workerd', 'edge'],
        ['worker', 'web'],
        ['browser', 'web'],
        ['bun', 'node'],
        ['deno', 'node'],
        ['', 'node'],
      ] as const) {
        // The edge build imports strip.wasm?module, which a bundler links in (wrangler, Next.js) and
        // Node does not: a loader hook stands in for the bundler, so the tarball's file is what runs.
        const edge = build === 'edge' ? ['--import', './link-wasm-modules.mjs'] : []
        const args = [...(condition ? [`--conditions=${condition}`] : []), ...edge, 'resolve.mjs']
        const { stdout } = await sh('esm', 'node', args)
        if (!stdout.includes(`/dist/${build}/index.js`)) throw new Error(`--conditions=${condition || '(none)'} picked ${stdout.trim()}`)
        const stripper = build === 'edge' ? 'wasm-import' : 'wasm-bytes'
        if (!stdout.includes(`stripper ${stripper}`))
          throw new Error(`--conditions=${condition || '(none)'}: ${stdout.trim()}, not ${stripper}`)
        picks.push(`${condition || 'node'}→${build}`)
      }
      return picks.join(' ')
    },
  )
  for (const runtime of ['bun', 'deno'] as const) {
    const binary = join(ROOT, 'runtimes', 'node_modules', '.bin', runtime)
    if (!existsSync(binary)) {
      console.log(`- ${runtime}: skipped (no ${runtime} in runtimes/node_modules)`)
      continue
    }
    await check(`${runtime}: resolves the Node build and verifies`, async () => {
      const args = runtime === 'deno' ? ['run', '-A', 'resolve.mjs'] : ['resolve.mjs']
      const { stdout } = await sh('esm', binary, args)
      if (!stdout.includes('/dist/node/index.js') || !stdout.includes('stripper wasm-bytes')) throw new Error(`picked ${stdout.trim()}`)
      return stdout.trim().replace(workdir, '…')
    })
  }
} catch (error) {
  failed++
  console.log(`✗ ${error instanceof Error ? error.message : String(error)}`)
} finally {
  if (KEEP) console.log(`kept ${workdir} and ${redisOnly}`)
  else for (const dir of [workdir, redisOnly]) rmSync(dir, { recursive: true, force: true })
}
console.log(`consumer: ${passed} passed, ${failed} failed (${((Date.now() - started) / 1000).toFixed(1)} s)`)
process.exitCode = failed === 0 ? 0 : 1

function writeProjects(): void {
  write('package.json', `${JSON.stringify({ name: 'hookguard-consumer', private: true }, null, 2)}\n`)

  // ESM: the Hono adapter without a server, the client against the emulator's mock service.
  write('esm/package.json', '{ "type": "module" }\n')
  write(
    'esm/test.mjs',
    `import assert from 'node:assert/strict'
import { createReceiver, sign, verifySignature } from '@hookguard/core'
import { webhook } from '@hookguard/hono'
import * as forFastify from '@hookguard/fastify'
import * as forFetch from '@hookguard/fetch'
import { redisDedupeStore, redisTokenStore } from '@hookguard/redis'
import Fastify from 'fastify'
import { createClient } from '@hookguard/client'
import { mockService } from '@hookguard/emulator'
import { Hono } from 'hono'

const secret = '${SECRET}'
const body = '{"event": "order.paid", "amount": 1.0}'
const signature = await sign(body, secret)
assert.equal(await verifySignature(body, signature, secret), true)
assert.equal(await verifySignature('{"event": "forged"}', signature, secret), false)

const receiver = createReceiver({ auth: { mode: 'secret', secret } })
const result = await receiver.verify({ method: 'POST', url: '/hooks', headers: { 'x-service-hmac-signature': signature }, body: new TextEncoder().encode(body) })
assert.equal(result.ok, true)

const app = new Hono().post('/hooks', webhook({ auth: { mode: 'secret', secret } }), (c) => c.json(c.get('webhook').payload))
const ok = await app.request('/hooks', { method: 'POST', body, headers: { 'X-Service-Hmac-Signature': signature } })
assert.equal(ok.status, 200)
assert.deepEqual(await ok.json(), { event: 'order.paid', amount: 1 })
const refused = await app.request('/hooks', { method: 'POST', body: '{"event":"forged"}', headers: { 'X-Service-Hmac-Signature': signature } })
assert.equal(refused.status, 401)
assert.equal((await refused.json()).error, 'invalid_signature')

const receive = forFetch.webhook({ auth: { mode: 'secret', secret } }, (delivery, _request, extra) => Response.json({ payload: delivery.payload, extra }))
const fetchOk = await receive(new Request('http://localhost/hooks', { method: 'POST', body, headers: { 'X-Service-Hmac-Signature': signature } }), 'ctx')
assert.equal(fetchOk.status, 200)
assert.deepEqual(await fetchOk.json(), { payload: { event: 'order.paid', amount: 1 }, extra: 'ctx' })

const fastify = Fastify()
fastify.register(async (hooks) => {
  await hooks.register(forFastify.webhook({ auth: { mode: 'secret', secret } }))
  hooks.post('/hooks', async (request) => forFastify.requireWebhook(request).payload)
})
const fastifyOk = await fastify.inject({ method: 'POST', url: '/hooks', payload: body, headers: { 'content-type': 'application/json', 'x-service-hmac-signature': signature } })
assert.equal(fastifyOk.statusCode, 200)
assert.deepEqual(fastifyOk.json(), { event: 'order.paid', amount: 1 })

// The Redis stores load without a Redis client installed (optional peers) and take one by shape.
const fakeRedis = { sendCommand: async () => 'OK', isReady: true }
assert.equal(typeof redisDedupeStore(fakeRedis).claim, 'function')
assert.equal(typeof redisTokenStore(fakeRedis).get, 'function')

const service = await mockService({ appId: 'app', appSecret: 'app-secret' })
try {
  const client = createClient({ baseUrl: service.url, appId: 'app', appSecret: 'app-secret' })
  assert.equal(typeof (await client.token()), 'string')
} finally {
  await service.close()
}

// The three entries share one WebhookError: a refusal made by an adapter's building block is the
// core's error, whichever entry it came through.
const { WebhookError } = await import('@hookguard/core')
const { rawBodyUnavailable, payloadTooLarge } = await import('@hookguard/core/adapter')
const { readNodeBody } = await import('@hookguard/core/node')
assert.ok(rawBodyUnavailable('x') instanceof WebhookError)
assert.ok(payloadTooLarge(1) instanceof WebhookError)
const consumed = { _body: true, readableEnded: true, readableDidRead: true, rawHeaders: [], headers: {} }
await assert.rejects(readNodeBody(consumed, 10, 'mount it first'), (error) => error instanceof WebhookError && error.code === 'raw_body_unavailable')

const core = import.meta.resolve('@hookguard/core')
assert.match(core, /\\/dist\\/node\\/index\\.js$/)
console.log('hono 200/401, fastify 200, receiver ok, client token ok, core → ' + core.slice(core.indexOf('/dist/')))
`,
  )
  // Prints the build an export condition picks, after checking that it verifies.
  write(
    'esm/resolve.mjs',
    `import { sign, verifySignature } from '@hookguard/core'
import { whitespaceStripper } from '@hookguard/core/adapter'
const signature = await sign('{"a": 1}', 'k')
if (!(await verifySignature('{"a":1}', signature, 'k'))) throw new Error('does not verify')
console.log(import.meta.resolve('@hookguard/core'), 'stripper', whitespaceStripper())
`,
  )
  // What wrangler and Next.js do with the edge build's `.wasm?module` import, done by Node's module
  // hooks: the file, compiled.
  write(
    'esm/wasm-module-hooks.mjs',
    `import { fileURLToPath } from 'node:url'
export async function load(url, context, nextLoad) {
  if (!url.endsWith('.wasm?module')) return nextLoad(url, context)
  const file = JSON.stringify(fileURLToPath(url.slice(0, -'?module'.length)))
  const source = \`import { readFileSync } from 'node:fs'\\nexport default new WebAssembly.Module(readFileSync(\${file}))\\n\`
  return { format: 'module', shortCircuit: true, source }
}
`,
  )
  write('esm/link-wasm-modules.mjs', "import { register } from 'node:module'\nregister('./wasm-module-hooks.mjs', import.meta.url)\n")

  // CommonJS: Express 5 and 4 on an ephemeral port, delivered to by the emulator.
  write('cjs/package.json', '{ "type": "commonjs" }\n')
  write(
    'cjs/test.cjs',
    `const assert = require('node:assert/strict')
const { sign, verifySignature, WebhookError } = require('@hookguard/core')
const { rawBodyUnavailable } = require('@hookguard/core/adapter')
const { nodeRequestHeaders } = require('@hookguard/core/node')
const { webhook } = require('@hookguard/express')
const forFastify = require('@hookguard/fastify')
const { deliver } = require('@hookguard/emulator')

const secret = '${SECRET}'

async function main() {
  assert.equal(await verifySignature('{"a": 1}', await sign('{"a":1}', secret), secret), true)
  assert.ok(rawBodyUnavailable('x') instanceof WebhookError, 'one WebhookError across entries')
  assert.deepEqual(nodeRequestHeaders({ rawHeaders: ['A', 'b'], headers: {} }), ['A', 'b'])
  const seen = []
  for (const name of ['express', 'express4']) {
    const express = require(name)
    const app = express()
    app.post('/hooks', webhook({ auth: { mode: 'secret', secret } }), (req, res) => res.json({ got: req.webhook.payload }))
    const server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)) })
    try {
      const url = 'http://127.0.0.1:' + server.address().port + '/hooks'
      const ok = await deliver({ url, mode: 'secret', secret, payload: { event: 'ping' } })
      assert.equal(ok.status, 200)
      const bad = await deliver({ url, mode: 'secret', secret: 'another-secret', payload: { event: 'ping' } })
      assert.equal(bad.status, 401)
      seen.push(name + ' ' + require(name + '/package.json').version)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  }
  const fastify = require('fastify')()
  fastify.register(async (hooks) => {
    await hooks.register(forFastify.webhook({ auth: { mode: 'secret', secret } }))
    hooks.post('/hooks', async (request) => forFastify.requireWebhook(request).payload)
  })
  const signed = await fastify.inject({ method: 'POST', url: '/hooks', payload: '{"event":"ping"}', headers: { 'content-type': 'application/json', 'x-service-hmac-signature': await sign('{"event":"ping"}', secret) } })
  assert.equal(signed.statusCode, 200)
  seen.push('fastify ' + require('fastify/package.json').version)
  const core = require.resolve('@hookguard/core')
  assert.match(core, /\\/dist\\/node\\/index\\.cjs$/)
  console.log(seen.join(', ') + ': 200 (express also 401); core → ' + core.slice(core.indexOf('/dist/')))
}
main().catch((error) => { console.error(error); process.exitCode = 1 })
`,
  )

  // TypeScript, node16: an ESM file and a CommonJS (.cts) file, so both declaration flavours are checked.
  write('ts-node16/package.json', '{ "type": "module" }\n')
  write(
    'ts-node16/tsconfig.json',
    `${JSON.stringify(
      {
        compilerOptions: {
          module: 'node16',
          moduleResolution: 'node16',
          target: 'es2022',
          strict: true,
          skipLibCheck: false,
          outDir: 'out',
          types: ['node'],
        },
        include: ['src'],
      },
      null,
      2,
    )}\n`,
  )
  write(
    'ts-node16/src/index.ts',
    `import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { sign, type VerifyResult, type WebhookDelivery, type WebhookOptions, createReceiver } from '@hookguard/core'
import { webhook, type KoaWebhookDelivery, type WebhookVariables } from '@hookguard/koa'
import { createClient, type Client } from '@hookguard/client'
import Koa from 'koa'
import { createRequire } from 'node:module'

const secret = '${SECRET}'
const options: WebhookOptions = { auth: { mode: 'secret', secret }, maxBodySize: 65_536 }
const body = '{"event": "customer.created", "name": "王 小明"}'
const signature: string = await sign(body, secret)
const result: VerifyResult = await createReceiver(options).verify({
  method: 'POST',
  url: '/hooks',
  headers: { 'x-service-hmac-signature': signature },
  body: new TextEncoder().encode(body),
})
assert.equal(result.ok, true)

// @ts-expect-error: 'hmac' is not a mode
const wrong: WebhookOptions = { auth: { mode: 'hmac' } }
void wrong

const client: Client = createClient({ baseUrl: 'https://api.example.com', appId: 'app', appSecret: 's' })
void client

const require = createRequire(import.meta.url)
const seen: string[] = []
for (const name of ['koa', 'koa2']) {
  const KoaClass = require(name) as typeof Koa
  const app = new KoaClass()
  app.use(webhook(options))
  app.use((ctx) => {
    // A Buffer on Node: its own methods compile.
    const delivery: KoaWebhookDelivery | undefined = ctx.state.webhook
    delivery?.rawBody.toString('utf8')
    const variables: WebhookVariables | undefined = delivery && { webhook: delivery }
    ctx.body = { got: variables?.webhook.payload }
  })
  const server = app.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  try {
    const { port } = server.address() as AddressInfo
    const ok = await fetch(\`http://127.0.0.1:\${port}/hooks\`, { method: 'POST', body, headers: { 'X-Service-Hmac-Signature': signature } })
    assert.equal(ok.status, 200)
    assert.deepEqual(await ok.json(), { got: { event: 'customer.created', name: '王 小明' } })
    const bad = await fetch(\`http://127.0.0.1:\${port}/hooks\`, { method: 'POST', body, headers: { 'X-Service-Hmac-Signature': '00' } })
    assert.equal(bad.status, 401)
    seen.push(\`\${name} \${(require(\`\${name}/package.json\`) as { version: string }).version}\`)
  } finally {
    await new Promise((resolve) => server.close(resolve))
  }
}
console.log(\`\${seen.join(', ')}: 200/401\`)
`,
  )
  write(
    'ts-node16/src/require.cts',
    `import assert = require('node:assert/strict')
import express = require('express')
import { webhook, type ExpressWebhookOptions } from '@hookguard/express'
import { sign, verifySignature } from '@hookguard/core'

const options: ExpressWebhookOptions = { auth: { mode: 'basic', username: 'hook', password: 'pw' }, onError: 'next' }
const app = express()
app.post('/hooks', webhook(options), (req: express.Request, res: express.Response) => {
  // Typed by the adapter's augmentation of Express.Request.
  const mode: 'secret' | 'basic' | 'oauth2' | 'none' | undefined = req.webhook?.mode
  res.json({ mode })
})

async function main(): Promise<void> {
  assert.equal(await verifySignature('{}', await sign('{}', 'k'), ['old', 'k']), true)
  const server = app.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  try {
    const { port } = server.address() as import('node:net').AddressInfo
    const auth = 'Basic ' + Buffer.from('hook:pw').toString('base64')
    const ok = await fetch(\`http://127.0.0.1:\${port}/hooks\`, { method: 'POST', body: '{"a":1}', headers: { authorization: auth } })
    assert.equal(ok.status, 200)
    assert.deepEqual(await ok.json(), { mode: 'basic' })
    assert.match(require.resolve('@hookguard/core'), /\\/dist\\/node\\/index\\.cjs$/)
    console.log('express (require from .cts): basic 200')
  } finally {
    await new Promise((resolve) => server.close(resolve))
  }
}
main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
`,
  )

  // TypeScript, bundler resolution.
  write('ts-bundler/package.json', '{ "type": "module" }\n')
  write(
    'ts-bundler/tsconfig.json',
    `${JSON.stringify(
      {
        compilerOptions: {
          module: 'esnext',
          moduleResolution: 'bundler',
          target: 'es2022',
          lib: ['es2022', 'dom'],
          strict: true,
          skipLibCheck: false,
          verbatimModuleSyntax: true,
          outDir: 'out',
          types: [],
        },
        include: ['src'],
      },
      null,
      2,
    )}\n`,
  )
  write(
    'ts-bundler/src/index.ts',
    `import { ERROR_STATUS, sign, verifySignature, type WebhookErrorCode } from '@hookguard/core'
import { tokenEndpoint, webhook } from '@hookguard/hono'
import { ApiError, createClient } from '@hookguard/client'
import { Hono } from 'hono'

const secret = '${SECRET}'
const auth = { mode: 'oauth2', appId: 'app-1', secret } as const
const app = new Hono()
app.get('/token', tokenEndpoint({ auth }))
app.post('/hooks', webhook({ auth }), (c) => {
  const payload: unknown = c.get('webhook').payload
  return c.json({ payload })
})

const code: WebhookErrorCode = 'invalid_token'
if (ERROR_STATUS[code] !== 401) throw new Error('status table')
if (!(await verifySignature('{"x":1}', await sign('{"x": 1}', secret), secret))) throw new Error('verify')

const token = await app.request(\`/token?appid=app-1&secret=\${secret}&grant_type=client_credentials\`)
const { access_token } = (await token.json()) as { access_token: string }
const ok = await app.request(\`/hooks?access_token=\${access_token}\`, { method: 'POST', body: '{"n":1}' })
if (ok.status !== 200) throw new Error(\`delivery answered \${ok.status}\`)
const refused = await app.request('/hooks?access_token=forged', { method: 'POST', body: '{"n":1}' })
if (refused.status !== 401) throw new Error(\`forged token answered \${refused.status}\`)

const client = createClient({ baseUrl: 'http://127.0.0.1:9', appId: 'a', appSecret: 'b', fetch: async () => new Response('{"error":"invalid_client"}', { status: 401, headers: { 'content-type': 'application/json' } }) })
const failure = await client.token().catch((error: unknown) => error)
if (!(failure instanceof ApiError) || failure.code !== 'invalid_client') throw new Error('client error')
console.log('hono oauth2 token 200, delivery 200, forged 401; client ApiError invalid_client')
`,
  )

  // Koa: what the adapter sets on ctx.request, typed by its own declarations…
  const koaTsconfig = `${JSON.stringify(
    {
      compilerOptions: {
        module: 'nodenext',
        target: 'es2022',
        strict: true,
        exactOptionalPropertyTypes: true,
        skipLibCheck: false,
        noEmit: true,
        types: ['node'],
      },
      include: ['src'],
    },
    null,
    2,
  )}\n`
  write('ts-koa/package.json', '{ "type": "module" }\n')
  write('ts-koa/tsconfig.json', koaTsconfig)
  write(
    'ts-koa/src/index.ts',
    `import { webhook } from '@hookguard/koa'
import Koa from 'koa'

new Koa().use(webhook({ auth: { mode: 'none' } })).use((ctx) => {
  const payload: unknown = ctx.request.body
  const text: string = ctx.request.rawBody
  ctx.body = { payload, length: text.length }
})
`,
  )
  // …and beside the body parsers' declarations of the same fields, which must merge with them.
  write('ts-koa-bodyparser/package.json', '{ "type": "module" }\n')
  write('ts-koa-bodyparser/tsconfig.json', koaTsconfig)
  write(
    'ts-koa-bodyparser/src/index.ts',
    `import { webhook } from '@hookguard/koa'
import { bodyParser } from '@koa/bodyparser'
import Koa from 'koa'
import koaBodyParser from 'koa-bodyparser'

const app = new Koa()
app.use(webhook({ auth: { mode: 'none' } })).use((ctx) => {
  const text: string = ctx.request.rawBody
  ctx.body = { payload: ctx.request.body as unknown, length: text.length }
})
new Koa().use(bodyParser()).use(koaBodyParser())
`,
  )
}

/** A dedupe-only app and a token store, where @hookguard/client is not installed. */
function writeRedisOnly(): void {
  const file = (path: string, text: string) => {
    mkdirSync(dirname(join(redisOnly, path)), { recursive: true })
    writeFileSync(join(redisOnly, path), text)
  }
  file('package.json', `${JSON.stringify({ name: 'hookguard-consumer-redis', private: true, type: 'module' }, null, 2)}\n`)
  file(
    'app/tsconfig.json',
    `${JSON.stringify({ compilerOptions: { module: 'nodenext', target: 'es2022', strict: true, skipLibCheck: false, noEmit: true, types: ['node'] }, include: ['*.ts'] }, null, 2)}\n`,
  )
  file(
    'app/index.ts',
    `import { createReceiver } from '@hookguard/core'
import { redisDedupeStore, redisTokenStore } from '@hookguard/redis'
import { createClient } from 'redis'

const redis = createClient({ url: process.env.REDIS_URL })
const receiver = createReceiver({ auth: { mode: 'none' }, dedupe: { store: redisDedupeStore(redis) } })
void receiver

const tokens = redisTokenStore(redis)
const token = await tokens.get()
const accessToken: string | undefined = token?.accessToken
void accessToken
// A store typed \`any\` (its types lost with the optional peer) would accept this.
// @ts-expect-error no such method
tokens.refresh()
`,
  )
}
