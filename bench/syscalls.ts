/**
 * What a request asks of the kernel, counted: per request, the system calls of each kind and the
 * page faults of each server of the HTTP bench (bench/http-server.ts), read by Linux `perf` from
 * the kernel's own tracepoints on the server's process, and the user and system CPU time the
 * server reports.
 *
 * Why: http.ts's CPU rows hold the kernel's share of a request, callgrind's counts
 * (instructions.ts) leave it out, and where the two disagree this tells whether a server makes
 * the kernel do more for each request (more reads or writes, more wake-ups, more faults) or the
 * difference is the run's. Not part of run.ts; it needs `perf` (Debian's `linux-perf`) and the
 * right to trace another process (root, or `kernel.perf_event_paranoid` at -1). Start it alone,
 * on the packages' builds as the benches measure them (`pnpm build` first):
 *
 * `node --import tsx bench/syscalls.ts [--framework=koa3] [--warmup=N] [--requests=N] [--rounds=N]`
 *
 * Each round starts every server afresh, warms each with `--warmup` requests (20 000), then
 * counts `--requests` (20 000) at 10 connections, one server at a time. The counts are the same
 * from round to round where the CPU times are not, which is the point.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { flag, numberFlag } from './flags.ts'
import { forkServer, sendDeliveries } from './http-fork.ts'
import { FRAMEWORKS, VARIANTS } from './http-server.ts'

const only = flag('framework')
const WARMUP = numberFlag('warmup') ?? 20_000
const REQUESTS = numberFlag('requests') ?? 20_000
const ROUNDS = numberFlag('rounds') ?? 2
const CONNECTIONS = 10

/** perf's names for what is counted, and the column each is shown under. */
const EVENTS: [event: string, column: string][] = [
  ['raw_syscalls:sys_enter', 'calls'],
  ['syscalls:sys_enter_read', 'read'],
  ['syscalls:sys_enter_write', 'write'],
  ['syscalls:sys_enter_writev', 'writev'],
  ['syscalls:sys_enter_epoll_pwait', 'epoll'],
  ['syscalls:sys_enter_futex', 'futex'],
  ['page-faults', 'faults'],
  ['context-switches', 'switches'],
]

const children = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of children) child.kill()
})

/** perf counting on one process until stopped; its `-x,` lines read back as counts by column. */
function counting(pid: number): { stop(): Promise<Record<string, number>> } {
  const args = ['stat', '-x,', ...EVENTS.flatMap(([event]) => ['-e', event]), '-p', String(pid)]
  const perf = spawn('perf', args, { stdio: ['ignore', 'ignore', 'pipe'] })
  children.add(perf)
  let text = ''
  perf.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk
  })
  const closed = new Promise<number | null>((resolve, reject) => {
    perf.once('error', reject)
    perf.once('close', resolve)
  })
  return {
    async stop() {
      perf.kill('SIGINT')
      await closed
      children.delete(perf)
      const counts: Record<string, number> = {}
      for (const line of text.trim().split('\n')) {
        const [value, , event] = line.split(',')
        const column = EVENTS.find(([name]) => name === event)?.[1]
        if (column !== undefined) counts[column] = Number(value)
      }
      if (Object.keys(counts).length !== EVENTS.length) throw new Error(`syscalls: perf counted no events:\n${text}`)
      return counts
    },
  }
}

const columns = ['user µs', 'system µs', ...EVENTS.map(([, column]) => column)]
console.log(['framework', 'server', ...columns].join('\t'))
for (const framework of FRAMEWORKS) {
  if (only !== undefined && only !== framework) continue
  for (let round = 0; round < ROUNDS; round++) {
    const servers = await Promise.all(VARIANTS.map((variant) => forkServer(framework, variant, { forked: (child) => children.add(child) })))
    try {
      for (const server of servers) await sendDeliveries(server, { amount: WARMUP }, CONNECTIONS)
      for (const server of servers) {
        const pid = server.child.pid as number
        const perf = counting(pid)
        // perf attaches to the process's threads before it counts; an idle server makes no calls meanwhile.
        await new Promise((resolve) => setTimeout(resolve, 500))
        const before = await server.cpu()
        const answered = (await sendDeliveries(server, { amount: REQUESTS }, CONNECTIONS)).requests.total
        const after = await server.cpu()
        const counts = await perf.stop()
        const row = [(after.user - before.user) / answered, (after.system - before.system) / answered]
        row.push(...EVENTS.map(([, column]) => (counts[column] as number) / answered))
        console.log([framework, server.variant, ...row.map((value) => value.toFixed(2))].join('\t'))
      }
    } finally {
      for (const server of servers) {
        server.child.kill()
        children.delete(server.child)
      }
    }
  }
}
