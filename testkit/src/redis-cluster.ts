/**
 * A real Redis Cluster for the tests: six `redis-server` processes (Debian's package) on loopback
 * ports of their own, joined by `redis-cli --cluster create` as three masters with one replica
 * each, with no persistence, in a temporary folder, and stopped and removed afterwards. A test
 * can SIGKILL a master and wait for its replica to take over, as in a crash. There is no shared
 * variant (a REDIS_URL): these tests kill nodes, which a shared cluster must not suffer.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { unassignedPort } from './ports.ts'
import { answeringProcess } from './redis-server.ts'

const HOST = '127.0.0.1'
const NODES = 6
const START_TIMEOUT_MS = 20_000
/** Redis Cluster's bus listens on the node's port + 10 000, so a node's port must leave room for it. */
const BUS_OFFSET = 10_000
const run = promisify(execFile)

export interface RedisClusterNode {
  port: number
  /** `redis://127.0.0.1:PORT`. */
  url: string
}

export interface RedisCluster {
  /** Every node, masters and replicas, as started. */
  nodes: RedisClusterNode[]
  /** One node's URL, enough for either library to discover the rest. */
  url: string
  /** The ports of the nodes that are masters now, as the cluster reports it. */
  masters(): Promise<number[]>
  /** The port of the master that serves each of `keys` now, in their order. */
  mastersOf(keys: string[]): Promise<number[]>
  /** What one running node says of the whole cluster now: `ok`, or `fail` while it refuses every command with `CLUSTERDOWN`. */
  state(port: number): Promise<'ok' | 'fail'>
  /** SIGKILLs one node, as a crash; resolves once its port is closed. */
  kill(port: number): Promise<void>
  /** Resolves once every node still running says `cluster_state:ok` and every slot has a master that runs. */
  healthy(timeoutMs?: number): Promise<void>
  /** Stops every node and removes the folder. */
  stop(): Promise<void>
}

export interface RedisClusterOptions {
  /**
   * `cluster-node-timeout`, in ms: how long a master may be unreachable before its replica is
   * promoted. Default 1000, for tests that kill one (Redis's own default is 15 000).
   */
  nodeTimeoutMs?: number
}

/** Whether `redis-server` and `redis-cli` (which joins the nodes) are both on PATH. */
export function hasRedisCluster(): boolean {
  return ['redis-server', 'redis-cli'].every((bin) => spawnSync(bin, ['--version'], { stdio: 'ignore' }).status === 0)
}

/** Starts six nodes, joins them as three masters with a replica each, and waits until the cluster is whole. */
export async function startRedisCluster({ nodeTimeoutMs = 1000 }: RedisClusterOptions = {}): Promise<RedisCluster> {
  if (!hasRedisCluster()) {
    throw new Error('a Redis Cluster test needs redis-server and redis-cli on PATH (Debian/Ubuntu: apt-get install redis-server)')
  }
  const dir = mkdtempSync(join(tmpdir(), 'hookguard-redis-cluster-'))
  const children = new Map<number, ChildProcess>()
  const killAll = () => {
    for (const child of children.values()) child.kill('SIGKILL')
  }
  // A test process that dies without calling stop() must not leave six servers behind.
  process.once('exit', killAll)

  const stop = async () => {
    await Promise.all([...children.keys()].map((port) => kill(port)))
    process.off('exit', killAll)
    rmSync(dir, { recursive: true, force: true })
  }
  const kill = async (port: number) => {
    const child = children.get(port)
    children.delete(port)
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    child.kill('SIGKILL')
    await exited
  }

  try {
    const ports = await clusterPorts(NODES)
    await Promise.all(
      ports.map(async (port) => {
        const settings: [string, string][] = [
          ['port', String(port)],
          ['bind', HOST],
          ['protected-mode', 'yes'],
          ['save', ''],
          ['appendonly', 'no'],
          ['dir', dir],
          ['dbfilename', `dump-${port}.rdb`],
          ['cluster-enabled', 'yes'],
          ['cluster-config-file', join(dir, `nodes-${port}.conf`)],
          ['cluster-node-timeout', String(nodeTimeoutMs)],
          // A replica takes over however long it was cut off from its master: the tests kill
          // masters on purpose and want the failover, not a cluster that stays down.
          ['cluster-replica-validity-factor', '0'],
          // A replica's first sync starts at once, not after Redis's default wait for more replicas.
          ['repl-diskless-sync-delay', '0'],
        ]
        const child = spawn(
          'redis-server',
          settings.flatMap(([name, value]) => [`--${name}`, value]),
          { stdio: ['ignore', 'ignore', 'ignore'] },
        )
        children.set(port, child)
        // This node itself, not another Redis on the port.
        await waitFor(() => answeringProcess(port).then((pid) => pid === child.pid), `node ${port} to answer`, child)
      }),
    )
    // redis-cli assigns the slots, pairs each master with a replica on another node, and waits
    // until every node has agreed on the configuration.
    await run('redis-cli', ['--cluster', 'create', ...ports.map((port) => `${HOST}:${port}`), '--cluster-replicas', '1', '--cluster-yes'], {
      timeout: START_TIMEOUT_MS,
    })
  } catch (error) {
    await stop()
    throw error
  }

  const running = () => [...children.keys()]
  const nodesOf = async () => parseNodes(await cli(running()[0] ?? 0, 'CLUSTER', 'NODES'))

  const cluster: RedisCluster = {
    nodes: [...children.keys()].map((port) => ({ port, url: `redis://${HOST}:${port}` })),
    url: `redis://${HOST}:${[...children.keys()][0]}`,
    async masters() {
      return (await nodesOf()).filter((node) => node.master && !node.failed).map((node) => node.port)
    },
    async mastersOf(keys) {
      const nodes = (await nodesOf()).filter((node) => node.master && !node.failed)
      return keys.map((key) => {
        const slot = keySlot(key)
        return nodes.find((node) => node.slots.some(([from, to]) => slot >= from && slot <= to))?.port ?? 0
      })
    },
    async state(port) {
      return /cluster_state:ok/.test(await cli(port, 'CLUSTER', 'INFO')) ? 'ok' : 'fail'
    },
    kill,
    async healthy(timeoutMs = START_TIMEOUT_MS) {
      await waitFor(
        async () => {
          const alive = running()
          const states = await Promise.all(alive.map((port) => cli(port, 'CLUSTER', 'INFO').catch(() => '')))
          if (!states.every((info) => /cluster_state:ok/.test(info))) return false
          // Every node's view: each slot range served by a master that is not failed, and whose process runs.
          const views = await Promise.all(alive.map(async (port) => parseNodes(await cli(port, 'CLUSTER', 'NODES').catch(() => ''))))
          return views.every((view) => {
            const serving = view.filter((node) => node.master && !node.failed && node.slots.length > 0)
            const covered = serving.reduce((sum, node) => sum + node.slots.reduce((n, [from, to]) => n + to - from + 1, 0), 0)
            return covered === 16_384 && serving.every((node) => alive.includes(node.port))
          })
        },
        'the cluster to be whole (cluster_state:ok, every slot on a running master)',
        undefined,
        timeoutMs,
      )
    },
    stop,
  }
  try {
    await cluster.healthy()
    // A replica that has not finished its first sync cannot take over; wait for every link.
    await waitFor(async () => {
      const infos = await Promise.all(running().map((port) => cli(port, 'INFO', 'replication')))
      const replicas = infos.filter((info) => /role:slave/.test(info))
      return replicas.length === NODES / 2 && replicas.every((info) => /master_link_status:up/.test(info))
    }, 'every replica to be in sync with its master')
  } catch (error) {
    await stop()
    throw error
  }
  return cluster
}

/**
 * The hash slot of a key, as Redis Cluster computes it: CRC16 (XMODEM) of the key, or of the part
 * inside its first non-empty `{…}` hash tag, modulo 16 384.
 */
export function keySlot(key: string): number {
  let bytes = new TextEncoder().encode(key)
  const open = bytes.indexOf(0x7b)
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1)
    if (close > open + 1) bytes = bytes.subarray(open + 1, close)
  }
  let crc = 0
  for (const byte of bytes) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  }
  return crc % 16_384
}

interface NodeLine {
  port: number
  master: boolean
  failed: boolean
  slots: [number, number][]
}

/** `CLUSTER NODES`: `<id> <ip:port@bus> <flags> <master> <ping> <pong> <epoch> <link> <slot> <slot>…`. */
function parseNodes(text: string): NodeLine[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [, address = '', flags = '', , , , , , ...slots] = line.trim().split(' ')
      const port = Number(address.split('@')[0]?.split(':').pop())
      return {
        port,
        master: flags.split(',').includes('master'),
        failed: /fail/.test(flags) || /noaddr/.test(flags),
        slots: slots
          .filter((slot) => !slot.startsWith('['))
          .map((slot) => {
            const [from, to = from] = slot.split('-')
            return [Number(from), Number(to)] as [number, number]
          }),
      }
    })
}

/** One command through redis-cli; resolves its raw reply, trimmed. */
async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', HOST, '-p', String(port), ...args], { timeout: 2000 })
  return stdout.trim()
}

async function waitFor(check: () => Promise<boolean>, what: string, child?: ChildProcess, timeoutMs = START_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (child !== undefined && child.exitCode !== null)
      throw new Error(`waiting for ${what}: redis-server exited with code ${child.exitCode}`)
    if (await check().catch(() => false)) return
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** `count` free ports whose cluster bus port (port + 10 000) is free too. */
async function clusterPorts(count: number): Promise<number[]> {
  const ports: number[] = []
  while (ports.length < count) {
    const port = await unassignedPort([BUS_OFFSET])
    const taken = ports.flatMap((other) => [other, other + BUS_OFFSET])
    if (!taken.includes(port) && !taken.includes(port + BUS_OFFSET)) ports.push(port)
  }
  return ports
}
