import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { canBind, refusedOrigin, unassignedPort } from '@hookguard/testkit/ports'
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
