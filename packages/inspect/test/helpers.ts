import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { type Agent, createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serve } from '@hono/node-server'
import { type HonoWebhookOptions, type WebhookVariables, webhook } from '@hookguard/hono'
import { Hono } from 'hono'
import { type Inspector, type InspectorOptions, startInspector } from '../src/index.ts'
import type { InspectedRecord } from '../src/record.ts'

export const SECRET = 'whsec-inspect-test-4f1c'

const closers: (() => Promise<void>)[] = []

/** Closes every server and inspector the test started. */
export async function cleanup(): Promise<void> {
  await Promise.all(closers.splice(0).map((close) => close()))
}

export interface Recorder {
  inspector: Inspector
  /** Resolves once `count` records are complete. */
  waitFor(count: number): Promise<InspectedRecord[]>
}

/** An inspector on ephemeral ports, closed by {@link cleanup}. */
export async function inspector(options: Partial<InspectorOptions> = {}): Promise<Recorder> {
  const done: InspectedRecord[] = []
  const waiters: { count: number; resolve: (records: InspectedRecord[]) => void }[] = []
  const started = await startInspector({
    auth: { mode: 'secret', secret: SECRET },
    port: 0,
    uiPort: 0,
    ...options,
    onRecord: (record) => {
      done.push(record)
      options.onRecord?.(record)
      for (const waiter of [...waiters]) {
        if (done.length >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1)
          waiter.resolve(done.slice())
        }
      }
    },
  })
  closers.push(() => started.close())
  return {
    inspector: started,
    waitFor: (count) => (done.length >= count ? Promise.resolve(done.slice()) : new Promise((resolve) => waiters.push({ count, resolve }))),
  }
}

/** A plain Node server, closed by {@link cleanup}. */
export async function nodeApp(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; server: Server }> {
  const server = createServer(handler)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  closers.push(
    () =>
      new Promise((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  )
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

/**
 * An app on @hookguard/hono with these options; its handler waits `delayMs` (so a duplicate sent
 * meanwhile gets 409), and fails the first time it sees a payload with `"fail_first": true` (which
 * releases dedupe's claim, so the same bytes can be replayed as new).
 */
export async function hookguardApp(options: HonoWebhookOptions, delayMs = 0): Promise<string> {
  const app = new Hono<{ Variables: WebhookVariables }>()
  const failed = new Set<string>()
  app.post('*', webhook(options), async (c) => {
    const delivery = c.get('webhook')
    const payload = delivery.payload as { fail_first?: boolean }
    if (payload?.fail_first === true && !failed.has(delivery.fingerprint)) {
      failed.add(delivery.fingerprint)
      return c.json({ error: 'failed_once' }, 500)
    }
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs))
    return c.json({ handled: true })
  })
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server
  await once(server, 'listening')
  closers.push(
    () =>
      new Promise((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

export interface RawAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
}

/** One request with exactly these headers and body chunks (chunked when there is no content-length). */
export function send(
  url: string,
  {
    method = 'POST',
    headers = {},
    chunks = [],
    agent,
  }: { method?: string; headers?: Record<string, string>; chunks?: (string | Uint8Array)[]; agent?: Agent },
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const target = new URL(url)
    const req = request(
      { host: target.hostname, port: target.port, method, path: `${target.pathname}${target.search}`, headers, agent },
      (res) => {
        const parts: Buffer[] = []
        res.on('data', (chunk: Buffer) => parts.push(chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }))
        res.on('error', reject)
      },
    )
    // Which request failed, and whether on a connection kept alive from an earlier one: a bare
    // `read ECONNRESET` says neither.
    req.on('error', (error: NodeJS.ErrnoException) => {
      const where = `${method} ${target.pathname.slice(0, 40)}${target.pathname.length > 40 ? '…' : ''}`
      const labelled = new Error(`${where}: ${error.message}${req.reusedSocket ? ' (on a reused connection)' : ''}`, { cause: error })
      reject(Object.assign(labelled, { code: error.code, reusedSocket: req.reusedSocket }))
    })
    for (const chunk of chunks) req.write(chunk)
    req.end()
  })
}

const REPOSITORY = fileURLToPath(new URL('../../..', import.meta.url))

/**
 * Runs the exported tests written into `dir` (a folder under packages/inspect/test) with the
 * repository's vitest, resolving the packages from source as the repository's tests do: what a
 * user's run of the exported files would print, and its exit status. One worker runs the files
 * one after another on one module graph (`isolate: false`): each file builds its own receiver
 * and keeps no state, and a fresh worker per file was most of the child's CPU time.
 */
export function runExportedTests(dir: string, env: Record<string, string>): { output: string; status: number | null } {
  writeFileSync(
    join(dir, 'vitest.config.ts'),
    "import { defineConfig } from 'vitest/config'\nimport { sourceResolution } from '../../../../vitest.shared.ts'\nexport default defineConfig({ ...sourceResolution, test: { include: ['*.test.ts'], isolate: false, maxWorkers: 1 } })\n",
  )
  const run = spawnSync(process.execPath, [join(REPOSITORY, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--root', dir], {
    cwd: dir,
    env: { ...process.env, ...env, CI: '1' },
    encoding: 'utf8',
    timeout: 60_000,
  })
  return { output: run.stdout + run.stderr, status: run.status }
}

/** Runs an exported shell command with `env` added: its stdout (bytes as latin1), stderr and exit code. */
export function runShell(command: string, env: Record<string, string>): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { env: { ...process.env, ...env }, timeout: 30_000 })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('latin1')
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ stdout, stderr, code }))
  })
}

/** A delivery record as the inspector keeps one, recorded at `/hooks?tenant=a` and verified unless `extra` says otherwise. */
export function recordOf(body: Uint8Array, headers: [string, string][], extra: Partial<InspectedRecord> = {}): InspectedRecord {
  return {
    id: 7,
    kind: 'delivery',
    time: 0,
    source: 'sender',
    method: 'POST',
    url: '/hooks?tenant=a',
    headers,
    body,
    bodyBytes: body.byteLength,
    mode: 'secret',
    verdict: 'verified',
    status: 200,
    durationMs: 1,
    ...extra,
  }
}
