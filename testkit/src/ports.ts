/**
 * Ports for what cannot listen on port 0 and report back: a child process told its port (redis-server,
 * `next start`), and an address that must stay refused for a whole test.
 *
 * A port the kernel has just handed out for port 0 and been given back is handed out again to the next
 * server that asks, which on a busy suite is often another test's: a child then fails to bind, or a test
 * that expected a refusal reaches someone else's server. So these ports come from below the kernel's
 * range for port 0, where no listener of the suite is ever put by the kernel, chosen at random and
 * checked free by binding them.
 *
 * Checked free is not enough while two suites run side by side (CONTRIBUTING.md asks for it): a
 * port is free while the server given it is stopped for a test of an outage, and another process
 * drawing then got it, started its own Redis there, and the first test's client, reconnecting,
 * reached that one. So each port handed out is also reserved, by a file named for it that holds
 * the process's id and when it began, until that process ends; a port another live process reserved
 * is never drawn.
 */
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

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
 * and as far out of that range (Redis Cluster's bus listens on its port + 10 000). Each is reserved for
 * this process until it ends. `draw` picks where to look, in [0, 1): for the tests of this module.
 */
export async function unassignedPort(offsets: readonly number[] = [], draw: () => number = Math.random): Promise<number> {
  const highest = ephemeralLow() - 1 - Math.max(0, ...offsets)
  if (highest <= LOWEST) throw new Error(`the kernel hands out ports from ${ephemeralLow()}: no room below it for a test's port`)
  for (let tries = 0; tries < TRIES; tries++) {
    const port = LOWEST + Math.floor(draw() * (highest - LOWEST + 1))
    const ports = [port, ...offsets.map((offset) => port + offset)]
    if (!ports.every(reserve)) continue
    if (await everyBindable(ports)) return port
  }
  throw new Error(`found no free port between ${LOWEST} and ${highest} in ${TRIES} tries`)
}

/** Where the reservations are: one file a port, holding the id of the process that drew it and when it began. */
export const RESERVATIONS = join(tmpdir(), 'hookguard-test-ports')
const reserved = new Set<number>()

/**
 * Whether `port` is this process's now, reserved by no other process that still runs (a worker
 * killed without its exit handler leaves its files behind). A port is handed out once a process:
 * one drawn before, even one that could not be bound, may belong to a server of this suite between
 * two starts.
 */
function reserve(port: number): boolean {
  if (reserved.has(port)) return false
  if (!pruned) pruneEnded()
  const file = join(RESERVATIONS, String(port))
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx')
      writeSync(fd, OWN_HOLDER)
      closeSync(fd)
      if (reserved.size === 0) process.once('exit', releaseAll)
      reserved.add(port)
      return true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      // Being written this moment (empty), or held by a live process: not this one's.
      if (!holderEnded(readFileSafely(file))) return false
      rmSync(file, { force: true })
    }
  }
  return false
}

let pruned = false

/**
 * Removes the reservations of processes that have ended, once a process: a test worker that is
 * killed, as Vitest ends its workers, never runs its exit handler, and each run would leave its
 * files behind.
 */
function pruneEnded(): void {
  pruned = true
  mkdirSync(RESERVATIONS, { recursive: true })
  for (const name of readdirSync(RESERVATIONS)) {
    if (holderEnded(readFileSafely(join(RESERVATIONS, name)))) rmSync(join(RESERVATIONS, name), { force: true })
  }
}

function readFileSafely(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return ''
  }
}

/**
 * When a process began, in clock ticks since the machine booted (Linux's /proc/PID/stat, its 22nd
 * field); `undefined` where there is no /proc, or the process is gone.
 */
function startedAt(pid: number): string | undefined {
  const stat = readFileSafely(`/proc/${pid}/stat`)
  // The command's name, in parentheses, may hold spaces: the fields are counted after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return fields[19] || undefined
}

/**
 * What a reservation holds: this process's id and when it began. An id alone is not enough: with
 * Linux's 32 768 ids, shared with every thread, two suites side by side go round them within
 * minutes, and a reservation left by a killed process then named a live stranger, which held it
 * for good (the test of its takeover failed once so, beside another suite).
 */
const OWN_HOLDER = `${process.pid} ${startedAt(process.pid) ?? ''}`.trim()

/** Whether the process a reservation names has ended: gone, or its id now another process's. Not while it is being written (empty). */
function holderEnded(holder: string): boolean {
  const [id, began] = holder.split(' ')
  const pid = Number(id)
  if (!Number.isInteger(pid) || pid <= 0) return false
  if (!isRunning(pid)) return true
  if (began === undefined) return false
  const now = startedAt(pid)
  return now !== undefined && now !== began
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function releaseAll(): void {
  for (const port of reserved) rmSync(join(RESERVATIONS, String(port)), { force: true })
  reserved.clear()
}

async function everyBindable(ports: number[]): Promise<boolean> {
  for (const port of ports) if (!(await canBind(port))) return false
  return true
}

/** An address nothing listens on, and nothing of the suite will: connecting to it is refused. */
export async function refusedOrigin(): Promise<string> {
  return `http://${HOST}:${await unassignedPort()}`
}
