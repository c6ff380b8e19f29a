/** Starting, asking and stopping the load server (`server.ts`) as a child process. */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import type { Framework, ServerReply, ServerRequest } from './settings.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const SERVER = fileURLToPath(new URL('./server.ts', import.meta.url))
/** tsx compiles the server and its imports on start; on a busy two-core runner that takes seconds. */
const START_TIMEOUT_MS = 30_000
const REPLY_TIMEOUT_MS = 10_000
const STOP_TIMEOUT_MS = 5_000

export interface ServerProcess {
  port: number
  /** Resident set size and heap, in bytes; `gc` first runs a full collection in the server. */
  memory(gc: boolean): Promise<ServerReply>
  stop(): Promise<void>
}

const running = new Set<ChildProcess>()

/** Last resort for a run that is interrupted or gives up: no server may outlive it. */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL')
  running.clear()
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

export async function startServer(framework: Framework): Promise<ServerProcess> {
  // Plain node with tsx as a loader, not the tsx command: the command runs the script in a child
  // of its own, whose memory would not be the memory of the process we talk to.
  const child = spawn(process.execPath, ['--expose-gc', '--conditions=@hookguard/source', '--import', 'tsx', SERVER, framework], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  })
  running.add(child)
  const exited = once(child, 'exit').then(([code, signal]) => {
    running.delete(child)
    throw new Error(`the ${framework} server exited (code ${code}, signal ${signal})`)
  })
  // Never unhandled: every await below races against it.
  exited.catch(() => {})

  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
  const firstLine = once(lines, 'line').then(([line]) => line as string)
  let port: number
  try {
    const line = await withTimeout(Promise.race([firstLine, exited]), START_TIMEOUT_MS, `starting the ${framework} server`)
    port = (JSON.parse(line) as { port: number }).port
  } catch (error) {
    child.kill('SIGKILL')
    throw error
  }
  lines.on('line', (line) => process.stdout.write(`[${framework}] ${line}\n`))

  return {
    port,
    memory(gc) {
      const reply = once(child, 'message').then(([message]) => message as ServerReply)
      const request: ServerRequest = { type: 'memory', gc }
      child.send(request)
      return withTimeout(Promise.race([reply, exited]), REPLY_TIMEOUT_MS, `asking the ${framework} server for its memory`)
    },
    async stop() {
      if (!running.has(child)) return
      const gone = once(child, 'exit')
      // The server exits by itself once the IPC channel closes.
      child.disconnect()
      try {
        await withTimeout(gone, STOP_TIMEOUT_MS, `stopping the ${framework} server`)
      } catch {
        child.kill('SIGKILL')
      }
      running.delete(child)
    },
  }
}
