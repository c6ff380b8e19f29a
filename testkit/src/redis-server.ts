/**
 * A real Redis for the tests: `redis-server` (Debian's package of that name) started on
 * 127.0.0.1 on a free port, with no persistence, in a temporary folder, and stopped afterwards;
 * or the server at `REDIS_URL` when that is set. Nothing here is mocked: the stores are tested
 * against the commands a real server answers.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { unassignedPort } from './ports.ts'

const HOST = '127.0.0.1'
const START_TIMEOUT_MS = 10_000

export interface RedisServer {
  /** `redis://127.0.0.1:PORT`, or `REDIS_URL` as given. */
  url: string
  /** Whether this process started the server, so `stop()` and `restart()` work. */
  own: boolean
  /** Stops the server (a crash, as far as clients can tell); resolves once the port is closed. */
  stop(): Promise<void>
  /**
   * Stops it (as `stop()` does, but keeping its folder), waits `downMs`, starts it again on the
   * same port, empty (or, with `appendonly`, with every write it acknowledged), and resolves once it
   * answers PING.
   */
  restart(downMs?: number): Promise<void>
}

/** Whether `redis-server` is on PATH. */
export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0
}

/**
 * Where the Redis tests can run: `'url'` (REDIS_URL), `'binary'` (redis-server on PATH), or
 * `undefined`, in which case `message` says how to get one.
 */
export function redisAvailability(): { via: 'url' | 'binary' | undefined; message: string } {
  if (process.env.REDIS_URL) return { via: 'url', message: 'Redis tests run against REDIS_URL' }
  if (hasRedisServer()) return { via: 'binary', message: 'Redis tests run against their own redis-server' }
  return {
    via: undefined,
    message:
      'Redis tests not run: no redis-server on PATH and no REDIS_URL. Install it (Debian/Ubuntu: apt-get install redis-server) or set REDIS_URL, then run pnpm test:redis.',
  }
}

/**
 * A Redis to test against. `{ own: true }` always starts one (the crash tests stop and restart
 * it, which a shared server must not suffer); otherwise `REDIS_URL` is used when set. With
 * `appendonly` (which implies `own`) the server writes each command to its append-only file before
 * answering it (`appendfsync always`), so a restart after a crash keeps every acknowledged write.
 * Throws with a clear message when neither works.
 */
export async function startRedis(options: { own?: boolean; appendonly?: boolean } = {}): Promise<RedisServer> {
  const persistence = options.appendonly ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']
  const given = process.env.REDIS_URL
  if (given && !options.own && !options.appendonly) {
    const unsupported = () => Promise.reject(new Error('REDIS_URL is a shared server: this test cannot stop or restart it'))
    return { url: given, own: false, stop: unsupported, restart: unsupported }
  }
  if (!hasRedisServer()) {
    throw new Error(
      given
        ? 'this test stops and restarts Redis, so it starts its own: it needs redis-server on PATH (Debian/Ubuntu: apt-get install redis-server)'
        : redisAvailability().message,
    )
  }
  const port = await unassignedPort()
  const dir = mkdtempSync(join(tmpdir(), 'hookguard-redis-'))
  let child: ChildProcess | undefined

  const launch = async () => {
    // stop() removes the folder; a restart makes it again.
    mkdirSync(dir, { recursive: true })
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', HOST, '--save', '', ...persistence, '--dir', dir, '--protected-mode', 'yes'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let output = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-2000)
    })
    child.stderr?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-2000)
    })
    try {
      await waitForAnswer(port, child)
    } catch (error) {
      child.kill('SIGKILL')
      throw new Error(`redis-server did not start on ${HOST}:${port}: ${(error as Error).message}\n${output}`)
    }
  }
  const stop = async () => {
    const running = child
    child = undefined
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()))
    // SIGKILL, not SHUTDOWN: the tests want a server that vanishes, as in a crash.
    running.kill('SIGKILL')
    await exited
  }

  await launch()
  // A test process that dies without calling stop() must not leave the server behind.
  const onExit = () => child?.kill('SIGKILL')
  process.once('exit', onExit)
  return {
    url: `redis://${HOST}:${port}`,
    own: true,
    async stop() {
      await stop()
      process.off('exit', onExit)
      rmSync(dir, { recursive: true, force: true })
    },
    async restart(downMs = 0) {
      await stop()
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs))
      await launch()
    },
  }
}

async function waitForAnswer(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS
  for (;;) {
    if (child.exitCode !== null) throw new Error(`it exited with code ${child.exitCode}`)
    const answering = await answeringProcess(port)
    // Another Redis on the port (this one could not bind it, and has not been seen to exit yet): a
    // test would reach that one, and stopping this one would stop nothing.
    if (answering !== undefined && answering !== child.pid) throw new Error(`another Redis (process ${answering}) answers on the port`)
    if (answering !== undefined) return
    if (Date.now() > deadline) throw new Error(`no answer within ${START_TIMEOUT_MS} ms`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** The process id of the Redis answering on `port` (its `INFO server`), or `undefined` for none. */
export function answeringProcess(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const socket = new Socket()
    let reply = ''
    const done = (pid: number | undefined) => {
      socket.destroy()
      resolve(pid)
    }
    socket.setTimeout(500, () => done(undefined))
    socket.once('error', () => done(undefined))
    socket.on('data', (chunk) => {
      reply += chunk.toString()
      if (reply.startsWith('-')) done(undefined)
      const found = /\r\nprocess_id:(\d+)\r\n/.exec(reply)
      if (found !== null) done(Number(found[1]))
    })
    socket.connect(port, HOST, () => socket.write('INFO server\r\n'))
  })
}
