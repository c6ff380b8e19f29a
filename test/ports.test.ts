import { spawn } from 'node:child_process'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { canBind, RESERVATIONS, refusedOrigin, unassignedPort } from '@hookguard/testkit/ports'
import { afterEach, describe, expect, it } from 'vitest'

// The ports the suite gives to child processes (redis-server, `next start`) and the addresses its tests
// expect to be refused. A port the kernel has handed out for port 0 and been given back goes to the next
// server that asks for one: a test expecting a refusal once reached the inspector's own page server
// started after it, and got its 421.

const listening: Server[] = []
afterEach(async () => {
  await Promise.all(listening.splice(0).map((server) => new Promise((done) => server.close(done))))
})

function listenOnAnyPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer()
    listening.push(server)
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port))
  })
}

const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])

describe('unassignedPort', () => {
  it('is free, and below every port the kernel hands out for port 0', async () => {
    for (let i = 0; i < 20; i++) {
      const port = await unassignedPort()
      expect(port).toBeLessThan(ephemeralLow)
      expect(await canBind(port)).toBe(true)
    }
  })

  it('leaves the ports at its offsets free and out of that range as well', async () => {
    const port = await unassignedPort([10_000])
    expect(port + 10_000).toBeLessThan(ephemeralLow)
    expect(await canBind(port + 10_000)).toBe(true)
  })

  it('never gives a port something listens on', async () => {
    const taken = createServer()
    listening.push(taken)
    const port = await unassignedPort()
    await new Promise<void>((done) => taken.listen(port, '127.0.0.1', done))
    for (let i = 0; i < 50; i++) expect(await unassignedPort()).not.toBe(port)
  })
})

describe('unassignedPort beside another suite', () => {
  /** Where `unassignedPort` looks for a draw of `d`: its range spans from 10 000 to the kernel's. */
  const drawFor = (port: number) => (port - 10_000 + 0.5) / (ephemeralLow - 10_000)

  it('never gives a port another running process drew, even while nothing listens on it, and takes it over once that process is gone', async () => {
    // Another process of the suite draws a port and keeps it, as a test does while its Redis is
    // stopped for an outage: nothing listens there.
    const module = fileURLToPath(new URL('../testkit/src/ports.ts', import.meta.url))
    const other = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `const { unassignedPort } = await import(${JSON.stringify(module)}); console.log(await unassignedPort()); setInterval(() => {}, 1000)`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    try {
      const port = await new Promise<number>((resolve, reject) => {
        other.stdout.once('data', (line: Buffer) => resolve(Number(line.toString().trim())))
        other.once('exit', (code) => reject(new Error(`the other process exited with ${code}`)))
      })
      expect(await canBind(port)).toBe(true)
      const draws = [drawFor(port), 0.5]
      const given = await unassignedPort([], () => draws.shift() ?? Math.random())
      expect(given).not.toBe(port)
      // Killed: its exit handler never ran, and its reservation is left behind, until the next
      // process to draw a port clears the reservations of the processes that have ended.
      other.kill('SIGKILL')
      await new Promise((resolve) => other.once('exit', resolve))
      expect(existsSync(join(RESERVATIONS, String(port)))).toBe(true)
      const next = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          '--input-type=module',
          '-e',
          `const { unassignedPort } = await import(${JSON.stringify(module)}); await unassignedPort()`,
        ],
        { stdio: 'inherit' },
      )
      await new Promise((resolve) => next.once('exit', resolve))
      expect(existsSync(join(RESERVATIONS, String(port)))).toBe(false)
      expect(await unassignedPort([], () => drawFor(port))).toBe(port)
    } finally {
      other.kill('SIGKILL')
    }
  }, 30_000)

  it('takes over a reservation whose process id now names a process that began after it', async () => {
    // Linux has 32 768 ids, threads' included, and two suites side by side go round them within
    // minutes: a reservation left by a killed process can name a live stranger.
    let port = 0
    for (let tries = 0; tries < 100 && port === 0; tries++) {
      const candidate = 10_000 + Math.floor(Math.random() * (ephemeralLow - 10_000))
      if (!existsSync(join(RESERVATIONS, String(candidate))) && (await canBind(candidate))) port = candidate
    }
    expect(port).toBeGreaterThan(0)
    const file = join(RESERVATIONS, String(port))
    // This process runs, but it did not begin one clock tick after the machine booted.
    writeFileSync(file, `${process.pid} 1`, { flag: 'wx' })
    try {
      expect(await unassignedPort([], () => drawFor(port))).toBe(port)
      expect(readFileSync(file, 'utf8')).not.toBe(`${process.pid} 1`)
    } catch (error) {
      rmSync(file, { force: true })
      throw error
    }
  })

  it('gives a port once in a process, though it is free again', async () => {
    const port = await unassignedPort()
    expect(await canBind(port)).toBe(true)
    const draws = [drawFor(port), drawFor(port), 0.5]
    expect(await unassignedPort([], () => draws.shift() ?? Math.random())).not.toBe(port)
  })
})

describe('refusedOrigin', () => {
  it('stays refused while the servers started after it take ports of their own', async () => {
    const origin = await refusedOrigin()
    const ports = await Promise.all(Array.from({ length: 50 }, listenOnAnyPort))
    expect(ports).not.toContain(Number(new URL(origin).port))
    const error = await fetch(origin).catch((caught: Error) => caught)
    expect(error).toBeInstanceOf(Error)
    expect(((error as Error).cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED')
  })
})
