import { once } from 'node:events'
import { createServer, type Socket, connect as tcpConnect } from 'node:net'
import { unassignedPort } from '@hookguard/testkit/ports'

const HOST = '127.0.0.1'

/**
 * A TCP gate in front of a Redis. Open, it carries bytes both ways. Shut, it drops every
 * connection it carried and refuses new ones, which is what a client sees of a server that
 * crashed. Unlike a crashed server it opens again the moment it is told to: a restarted
 * `redis-server` answers only once a process has started, which beside a second test suite took
 * 2.7 s, longer than a test of a short outage can allow.
 */
export interface Gate {
  /** The address to connect through. */
  url: string
  shut(): Promise<void>
  open(): Promise<void>
  /**
   * When (`performance.now()`) the gate took its first connection since it last opened: the
   * moment a client was back, which a loaded machine can hold up well past the gate's opening.
   */
  reconnected(): Promise<number>
  close(): Promise<void>
}

export async function gateTo(redisPort: number): Promise<Gate> {
  const port = await unassignedPort()
  const carried = new Set<Socket>()
  let firstSinceOpen = moment()
  const server = createServer((incoming) => {
    firstSinceOpen.resolve(performance.now())
    const outgoing = tcpConnect(redisPort, HOST)
    for (const [from, to] of [
      [incoming, outgoing],
      [outgoing, incoming],
    ] as const) {
      carried.add(from)
      from.pipe(to)
      // Either side going ends both, as one connection; an error is that side going, never the test's.
      from.on('error', () => to.destroy())
      from.once('close', () => {
        carried.delete(from)
        to.destroy()
      })
    }
  })
  const listen = async () => {
    firstSinceOpen = moment()
    server.listen(port, HOST)
    await once(server, 'listening')
  }
  const shut = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    for (const socket of carried) socket.destroy()
    await closed
  }
  await listen()
  return {
    url: `redis://${HOST}:${port}`,
    shut,
    open: listen,
    reconnected: () => firstSinceOpen.promise,
    close: async () => {
      if (server.listening) await shut()
    },
  }
}

/** A moment to be told once: the first `resolve` sets it. */
function moment(): { promise: Promise<number>; resolve(at: number): void } {
  let resolve: (at: number) => void = () => {}
  const promise = new Promise<number>((settle) => {
    resolve = settle
  })
  return { promise, resolve: (at) => resolve(at) }
}
