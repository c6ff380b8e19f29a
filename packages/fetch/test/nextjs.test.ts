import { type ChildProcess, spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { delivered, signed, vector } from '@hookguard/testkit/adapter-tests'
import { build, staleBuilds } from '@hookguard/testkit/builds'
import { unassignedPort } from '@hookguard/testkit/ports'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// A real Next.js route handler (examples/nextjs, App Router, `next build` then `next start`) with
// webhook() as its POST export, delivered to over HTTP. Next resolves the packages as a user's app
// does, through their published entries: the packages it imports are built first when their build
// is missing or older than their source, so the suite runs from a fresh clone.

const APP = fileURLToPath(new URL('../../../examples/nextjs/', import.meta.url))
const NEXT = fileURLToPath(new URL('../../../examples/node_modules/.bin/next', import.meta.url))
const BUILT = { core: ['dist/node/index.js', 'dist/web/index.js'], fetch: ['dist/index.js'] }
/**
 * Bounds against a hang, not times the builds must keep. Building the core and the Fetch adapter
 * (tsup, with declarations) on a busy two-core machine.
 */
const PACKAGES_MS = 300_000
/**
 * `next build` on a busy two-core machine: beside a second whole suite, on a machine where a
 * process's start and its fresh memory cost more than on others (bench/suite-history.md), it
 * compiled for 2.5 minutes and was still checking types at the 3 minutes it was once given.
 */
const BUILD_MS = 600_000
const START_MS = 30_000

const env = {
  ...process.env,
  // Not vitest's 'test': Next builds and serves production as a deployment would.
  NODE_ENV: 'production',
  NEXT_TELEMETRY_DISABLED: '1',
  WEBHOOK_SECRET: vector.secret,
}

let server: ChildProcess | undefined
let origin = ''

/** Runs `next` with `args` in the app's folder, resolving its output once it exits 0. */
function next(args: string[], timeout: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(NEXT, args, { cwd: APP, env, stdio: ['ignore', 'pipe', 'pipe'], timeout, killSignal: 'SIGKILL' })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk))
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`next ${args[0]} exited with ${code}:\n${output.slice(-2000)}`)),
    )
  })
}

/** Starts `next start` and resolves once it answers; its process group goes in afterAll. */
async function start(): Promise<void> {
  const port = await unassignedPort()
  origin = `http://127.0.0.1:${port}`
  server = spawn(NEXT, ['start', '--hostname', '127.0.0.1', '--port', String(port)], { cwd: APP, env, stdio: 'ignore', detached: true })
  const deadline = Date.now() + START_MS
  while (Date.now() < deadline) {
    if (
      await fetch(`${origin}/webhooks`, { method: 'HEAD' }).then(
        () => true,
        () => false,
      )
    )
      return
    await new Promise((done) => setTimeout(done, 200))
  }
  throw new Error(`next start did not answer within ${START_MS} ms`)
}

function post(init: { headers?: Record<string, string>; body: string }): Promise<Response> {
  return fetch(`${origin}/webhooks`, { method: 'POST', ...init })
}

describe('a Next.js App Router route handler (examples/nextjs)', () => {
  beforeAll(
    async () => {
      build(staleBuilds(BUILT))
      await next(['build'], BUILD_MS)
      await start()
    },
    PACKAGES_MS + BUILD_MS + START_MS + 10_000,
  )

  afterAll(() => {
    if (server?.pid !== undefined) {
      try {
        process.kill(-server.pid, 'SIGKILL')
      } catch {}
    }
    // Written by the build and pointing into dist/, which the repository's typecheck leaves out.
    rmSync(new URL('next-env.d.ts', `file://${APP}`), { force: true })
  })

  it("answers the service's signed delivery with the handler's Response", async () => {
    const answer = await post({ headers: signed.headers, body: delivered.raw })
    expect(answer.status).toBe(200)
    expect(await answer.json()).toEqual({ mode: 'secret', payload: delivered.payload, bytes: Buffer.byteLength(delivered.raw) })
  })

  it('refuses a body the signature does not cover with 401 invalid_signature, as JSON', async () => {
    const answer = await post({ headers: signed.headers, body: delivered.raw.replace('acme', 'evil') })
    expect(answer.status).toBe(401)
    expect(answer.headers.get('cache-control')).toBe('no-store')
    expect(((await answer.json()) as { error: string }).error).toBe('invalid_signature')
  })

  it('refuses a delivery with no signature with 401 missing_signature', async () => {
    const answer = await post({ headers: { 'content-type': 'application/json' }, body: delivered.raw })
    expect(answer.status).toBe(401)
    expect(((await answer.json()) as { error: string }).error).toBe('missing_signature')
  })
})
