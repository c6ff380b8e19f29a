/**
 * One bench/http-server.ts in a child process of its own, so that what is measured of it is the
 * server's alone, and the deliveries sent to it: for the HTTP bench (http.ts), the counted one
 * (instructions.ts, under callgrind) and the count of what each request asks of the kernel
 * (syscalls.ts).
 */
import { type ChildProcess, type ForkOptions, fork } from 'node:child_process'
import { type AutocannonResult, autocannon } from './autocannon.ts'
import { benchDelivery, type Framework, PATH, type ServerMessage, type Variant } from './http-server.ts'

export interface ForkedServer<V extends Variant = Variant> {
  variant: V
  url: string
  child: ChildProcess
  /** The server process's own `process.cpuUsage()`, asked over IPC. */
  cpu(): Promise<NodeJS.CpuUsage>
}

/**
 * The child inherits this process's execArgv (tsx's loader) unless `options` says otherwise, and no
 * source condition: it runs the adapters' and the core's builds, as users do.
 */
export function forkServer<V extends Variant>(
  framework: Framework,
  variant: V,
  options: ForkOptions & { startTimeoutMs?: number; forked?: (child: ChildProcess) => void } = {},
): Promise<ForkedServer<V>> {
  const { startTimeoutMs = 20_000, forked, ...forkOptions } = options
  const child = fork(new URL('./http-server.ts', import.meta.url), [framework, variant], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    ...forkOptions,
  })
  forked?.(child)
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => {
      child.kill()
      reject(error)
    }
    const timer = setTimeout(() => fail(new Error(`bench: ${framework} ${variant} did not start`)), startTimeoutMs)
    child.once('error', reject)
    child.once('message', (message: ServerMessage) => {
      clearTimeout(timer)
      if (!('port' in message)) return fail(new Error(`bench: ${framework} ${variant}: unexpected first message`))
      resolve({
        variant,
        url: `http://127.0.0.1:${message.port}${PATH}`,
        child,
        cpu: () =>
          new Promise((done) => {
            child.once('message', (reply: ServerMessage) => {
              if ('cpu' in reply) done(reply.cpu)
            })
            child.send('cpu')
          }),
      })
    })
  })
}

/** The bench's one delivery: 1 KiB of the service's JSON, signed, as every server is sent it. */
export const delivery = await benchDelivery()

/**
 * Signed deliveries at `connections`, `amount` of them or for `duration` seconds: autocannon's
 * result, once every one was answered 2xx (it throws otherwise).
 */
export async function sendDeliveries(
  server: Pick<ForkedServer, 'url' | 'variant'>,
  load: { amount: number } | { duration: number },
  connections: number,
  timeoutS?: number,
): Promise<AutocannonResult> {
  const result = await autocannon({
    url: server.url,
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body,
    connections,
    pipelining: 1,
    ...load,
    ...(timeoutS !== undefined && { timeout: timeoutS }),
  })
  const expected = 'amount' in load ? result.requests.total === load.amount : result.requests.total > 0
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0 || !expected) {
    throw new Error(
      `bench: ${server.url} (${server.variant}): ${result.requests.total} answered, ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
    )
  }
  return result
}
