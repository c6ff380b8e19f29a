import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { sendTo } from '@hookguard/testkit/http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// Tokens are stateless: any receiver configured alike accepts a token another issued, in another
// process and on another framework, and one configured with another secret refuses it.

const APP_ID = 'wx-app-fleet'
const SECRET = 'oauth-fleet-canary-2c7e'
const OTHER_SECRET = 'oauth-fleet-other-canary-9f10'
const RECEIVER = fileURLToPath(new URL('./fixtures/receiver-process.ts', import.meta.url))
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const START_TIMEOUT = 20_000

interface Receiver {
  child: ChildProcess
  port: number
}

const children: ChildProcess[] = []

/** Starts a receiver in a child process (TypeScript sources through tsx) and waits for its port. */
async function startReceiver(framework: 'hono' | 'express' | 'koa', secret: string): Promise<Receiver> {
  const child = spawn(process.execPath, ['--conditions=@hookguard/source', '--import', 'tsx', RECEIVER], {
    cwd: ROOT,
    env: { ...process.env, HOOKGUARD_FRAMEWORK: framework, HOOKGUARD_APP_ID: APP_ID, HOOKGUARD_SECRET: secret },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  children.push(child)
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const port = new Promise<number>((resolve, reject) => {
    let stdout = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      const line = stdout.split('\n').find((l) => l.startsWith('{"port"'))
      if (line !== undefined) resolve((JSON.parse(line) as { port: number }).port)
    })
    child.once('exit', (code) => reject(new Error(`the ${framework} receiver exited (${code}): ${stderr}`)))
  })
  const timeout = new Promise<never>((_, reject) => {
    setTimeout(
      () => reject(new Error(`the ${framework} receiver did not listen within ${START_TIMEOUT} ms: ${stderr}`)),
      START_TIMEOUT,
    ).unref()
  })
  return { child, port: await Promise.race([port, timeout]) }
}

async function fetchToken({ port }: Receiver): Promise<string> {
  const query = new URLSearchParams({ appid: APP_ID, secret: SECRET, grant_type: 'client_credentials' })
  const reply = await sendTo(port, { method: 'GET', path: `/token?${query}` })
  expect(reply.status, reply.text).toBe(200)
  return (JSON.parse(reply.text) as { access_token: string }).access_token
}

const deliver = ({ port }: Receiver, token: string) =>
  sendTo(port, {
    path: `/hooks?access_token=${encodeURIComponent(token)}`,
    headers: { 'content-type': 'application/json' },
    body: '{"event":"customer.created"}',
  })

describe('OAuth 2.0 tokens across processes', () => {
  let a: Receiver
  let b: Receiver
  let elsewhere: Receiver

  beforeAll(async () => {
    ;[a, b, elsewhere] = await Promise.all([
      startReceiver('hono', SECRET),
      startReceiver('express', SECRET),
      startReceiver('koa', OTHER_SECRET),
    ])
  }, START_TIMEOUT + 5_000)

  afterAll(async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return
        const exited = once(child, 'exit')
        child.kill()
        await exited
      }),
    )
  })

  it('delivers to a receiver in another process (Express) with a token a first one (Hono) issued', async () => {
    const token = await fetchToken(a)
    const reply = await deliver(b, token)
    expect(reply.status, reply.text).toBe(200)
    const { payload, pid } = JSON.parse(reply.text) as { payload: unknown; pid: number }
    expect(payload).toEqual({ event: 'customer.created' })
    expect(pid).toBe(b.child.pid)
    expect(pid).not.toBe(a.child.pid)
  })

  it('delivers to the issuing process with a token the other issued, the other way round', async () => {
    expect((await deliver(a, await fetchToken(b))).status).toBe(200)
  })

  it('answers 401 invalid_token in a process (Koa) configured with another secret', async () => {
    const reply = await deliver(elsewhere, await fetchToken(a))
    expect(reply.status).toBe(401)
    expect(JSON.parse(reply.text)).toEqual({ error: 'invalid_token', message: expect.any(String) })
    expect(reply.headers['www-authenticate']).toBe('Bearer error="invalid_token"')
  })
})
