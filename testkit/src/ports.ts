/**
 * Ports for what cannot listen on port 0 and report back: a child process told its port (redis-server,
 * `next start`), and an address that must stay refused for a whole test.
 *
 * A port the kernel has just handed out for port 0 and been given back is handed out again to the next
 * server that asks, which on a busy suite is often another test's: a child then fails to bind, or a test
 * that expected a refusal reaches someone else's server. So these ports come from below the kernel's
 * range for port 0, where no listener of the suite is ever put by the kernel, chosen at random and
 * checked free by binding them.
 */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

const HOST = '127.0.0.1'
/** Linux's default range for port 0 starts at 32 768; macOS's and Windows' at 49 152. */
const DEFAULT_EPHEMERAL_LOW = 32_768
const LOWEST = 10_000
const TRIES = 200

/** The first port the kernel hands out for port 0. */
function ephemeralLow(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)
    const port = Number(low)
    return Number.isInteger(port) && port > 0 ? port : DEFAULT_EPHEMERAL_LOW
  } catch {
    return DEFAULT_EPHEMERAL_LOW
  }
}

/** Binds `port` on loopback and lets it go again; resolves whether it could. */
export function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, HOST, () => server.close(() => resolve(true)))
  })
}

/**
 * A free loopback port the kernel never hands out for port 0, with `offsets` more above it free as well
 * and as far out of that range (Redis Cluster's bus listens on its port + 10 000).
 */
export async function unassignedPort(offsets: readonly number[] = []): Promise<number> {
  const highest = ephemeralLow() - 1 - Math.max(0, ...offsets)
  if (highest <= LOWEST) throw new Error(`the kernel hands out ports from ${ephemeralLow()}: no room below it for a test's port`)
  for (let tries = 0; tries < TRIES; tries++) {
    const port = LOWEST + Math.floor(Math.random() * (highest - LOWEST + 1))
    if (await everyBindable([port, ...offsets.map((offset) => port + offset)])) return port
  }
  throw new Error(`found no free port between ${LOWEST} and ${highest} in ${TRIES} tries`)
}

async function everyBindable(ports: number[]): Promise<boolean> {
  for (const port of ports) if (!(await canBind(port))) return false
  return true
}

/** An address nothing listens on, and nothing of the suite will: connecting to it is refused. */
export async function refusedOrigin(): Promise<string> {
  return `http://${HOST}:${await unassignedPort()}`
}
