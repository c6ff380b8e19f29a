import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { closeServers, startServer } from './helpers.ts'

// The command line as a process, from its source: what only a real process shows (a reader that
// closes the pipe, the exit code). The in-process tests (cli.test.ts) cover the rest.

afterEach(closeServers)

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url))
const TSX = `${ROOT}node_modules/.bin/tsx`

interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/**
 * Runs `hookguard …`. With `firstLineOnly`, stdout is closed once its first line is read, as
 * `hookguard … | head -1` does.
 */
function hookguard(args: readonly string[], { firstLineOnly = false, env = {} as Record<string, string> } = {}): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(TSX, ['--conditions=@hookguard/source', CLI, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      if (firstLineOnly && stdout.includes('\n')) child.stdout.destroy()
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
}

// A process started through tsx takes seconds on a busy machine.
describe('hookguard, as a process', { timeout: 30_000 }, () => {
  it('exits quietly, with the command’s own code, when the reader of its output leaves (| head -1)', async () => {
    // An answer far larger than a pipe's buffer: the writes after the first line meet a closed pipe.
    const receiver = await startServer(() => ({ status: 200, headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(1 << 20) }))
    const exit = await hookguard(['send', `${receiver.url}/webhooks`, '--mode', 'none'], { firstLineOnly: true })
    expect(exit.stdout.split('\n')[0]).toBe('200 OK')
    expect(exit.stderr).toBe('')
    expect([exit.code, exit.signal]).toEqual([0, null])
  })

  it('names a mistyped command, suggests the nearest, and exits 2', async () => {
    const exit = await hookguard(['sned', 'http://127.0.0.1:9/webhooks'])
    expect(exit.stderr).toContain('unknown command "sned"; did you mean "send"?')
    expect(exit.stdout).toBe('')
    expect(exit.code).toBe(2)
  })

  it('refuses --secret for the token command, whose secret is the app secret: --app-secret', async () => {
    const exit = await hookguard(['token', 'http://127.0.0.1:9/token', '--appid', 'app-1', '--secret', 'app-secret-9f1d'])
    expect(exit.stderr).toContain('--app-secret')
    expect(exit.stderr).not.toContain('app-secret-9f1d')
    expect(exit.code).toBe(2)
  })
})
