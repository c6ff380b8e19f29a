/**
 * The multi-instance run (`pnpm demo:cluster`): several receiver processes share one real Redis
 * for `dedupe`, and the emulator delivers a few thousand events the way the service does, each
 * event also duplicated at once to another instance and retried after it was handled. Every
 * event's handler must run exactly once across all instances. Prints the figures; `--write` puts
 * them into docs/reliability.md. Bounded: it stops by itself after `--timeout` seconds.
 *
 * With `--handoff`, each receiver puts the deliveries on a BullMQ queue and answers 202, and
 * `--workers` worker processes run them: the same count, across the workers.
 *
 * Options: --events=<n> (default 2000), --instances=<n> (default 3), --concurrency=<n> (default 32),
 * --timeout=<s> (default 120), --handoff, --workers=<n> (default 2, with --handoff), --write.
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { fileURLToPath } from 'node:url'
import { deliver } from '@hookguard/emulator'
import { startRedis } from '@hookguard/testkit/redis-server'

const args = Object.fromEntries(process.argv.slice(2).map((arg) => arg.replace(/^--/, '').split('=') as [string, string | undefined]))
const EVENTS = Number(args.events ?? 2000)
const INSTANCES = Number(args.instances ?? 3)
const CONCURRENCY = Number(args.concurrency ?? 32)
const TIMEOUT_S = Number(args.timeout ?? 120)
const HANDOFF = 'handoff' in args
const WORKERS = HANDOFF ? Number(args.workers ?? 2) : 0
const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url))
const SECRET = 'whsec-cluster-run-3c1f'
const RECEIVER = fileURLToPath(new URL('./receiver.ts', import.meta.url))
const REPORT = fileURLToPath(new URL('../../docs/reliability.md', import.meta.url))
const BLOCK = 'handoff' in args ? 'cluster-handoff-figures' : 'cluster-figures'
const BEGIN = `<!-- ${BLOCK}:begin (written by load/cluster/run.ts --write; edits inside are overwritten) -->`
const END = `<!-- ${BLOCK}:end -->`

interface Instance {
  child: ChildProcess
  url: string
}

const deadline = AbortSignal.timeout(TIMEOUT_S * 1000)
const redis = await startRedis()
const handled = new Map<number, number>()
const instances: Instance[] = []
const workers: ChildProcess[] = []

try {
  for (let i = 0; i < INSTANCES; i++) instances.push(await startInstance(redis.url))
  for (let i = 0; i < WORKERS; i++) workers.push(await startWorker(redis.url))
  const figures = await deliverAll()
  // Queued deliveries run after their answer: wait, within the run's bound, until each has run.
  while (HANDOFF && handled.size < EVENTS && !deadline.aborted) await new Promise((resolve) => setTimeout(resolve, 100))
  // And a little longer, so that a second run of any of them would be seen.
  if (HANDOFF) await new Promise((resolve) => setTimeout(resolve, 1000))
  const runs = [...handled.values()]
  const once = runs.filter((n) => n === 1).length
  const summary = {
    ...figures,
    events: EVENTS,
    instances: INSTANCES,
    workers: WORKERS,
    handledOnce: once,
    handledTwice: runs.filter((n) => n > 1).length,
    neverHandled: EVENTS - handled.size,
  }
  console.log(JSON.stringify(summary))
  const table = render(summary)
  console.log(table)
  if ('write' in args) writeFigures(table)
  if (once !== EVENTS || figures.errors > 0) {
    console.error(`cluster run: FAILED (${once} of ${EVENTS} events handled exactly once, ${figures.errors} errors)`)
    process.exitCode = 1
  } else
    console.log(
      `cluster run: every one of ${EVENTS} events handled exactly once across ${INSTANCES} instances${HANDOFF ? ` and ${WORKERS} workers` : ''}`,
    )
} finally {
  const children = [...instances.map(({ child }) => child), ...workers]
  for (const child of children) child.disconnect()
  await Promise.all(
    children.map((child) => new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)))),
  )
  await redis.stop()
}

function countHandled(message: { handled?: number }): void {
  if (message.handled !== undefined) handled.set(message.handled, (handled.get(message.handled) ?? 0) + 1)
}

async function startWorker(redisUrl: string): Promise<ChildProcess> {
  const child = fork(WORKER, [redisUrl], { execArgv: ['--conditions=@hookguard/source', '--import', 'tsx'], stdio: 'inherit' })
  child.on('message', countHandled)
  await new Promise<void>((resolve, reject) => {
    child.on('message', (message: { ready?: boolean }) => message.ready === true && resolve())
    child.once('exit', (code) => reject(new Error(`a worker exited with ${code} before it was ready`)))
    deadline.addEventListener('abort', () => reject(new Error('timed out starting the workers')))
  })
  return child
}

async function startInstance(redisUrl: string): Promise<Instance> {
  const child = fork(RECEIVER, [redisUrl, SECRET, ...(HANDOFF ? ['handoff'] : [])], {
    execArgv: ['--conditions=@hookguard/source', '--import', 'tsx'],
    stdio: 'inherit',
  })
  child.on('message', countHandled)
  const port = await new Promise<number>((resolve, reject) => {
    child.on('message', (message: { port?: number }) => message.port !== undefined && resolve(message.port))
    child.once('exit', (code) => reject(new Error(`a receiver exited with ${code} before listening`)))
    deadline.addEventListener('abort', () => reject(new Error('timed out starting the receivers')))
  })
  return { child, url: `http://127.0.0.1:${port}/webhooks` }
}

interface Figures {
  deliveries: number
  duplicatesInProgress: number
  duplicatesDone: number
  errors: number
  p50: number
  p99: number
  seconds: number
}

/** Delivers every event three times: to one instance, at once to another, and again once handled. */
async function deliverAll(): Promise<Figures> {
  const latencies: number[] = []
  const figures = { deliveries: 0, duplicatesInProgress: 0, duplicatesDone: 0, errors: 0 }
  const started = performance.now()

  /** Sends until the answer is final, as the service does: a 409 is retried after its Retry-After (capped for the run). */
  async function send(id: number, instance: Instance): Promise<void> {
    const payload = { event: 'order.paid', data: { id, orderNo: `SO-${id}`, amount: 12.5 } }
    for (let attempt = 0; attempt < 20 && !deadline.aborted; attempt++) {
      const begun = performance.now()
      figures.deliveries++
      try {
        const { status, headers, body } = await deliver({ url: instance.url, mode: 'secret', secret: SECRET, payload, signal: deadline })
        latencies.push(performance.now() - begun)
        if (status === 204 || status === 202) return
        if (status === 200 && body.includes('"duplicate":true')) {
          figures.duplicatesDone++
          return
        }
        if (status === 409 || status === 503) {
          figures.duplicatesInProgress++
          await new Promise((resolve) => setTimeout(resolve, Math.min(Number(headers['retry-after'] ?? 1) * 1000, 200)))
          continue
        }
        figures.errors++
        return
      } catch (error) {
        // The emulator reports a refusal as an error; anything else is a broken run.
        const status = (error as { status?: number }).status
        if (status === 409 || status === 503) {
          figures.duplicatesInProgress++
          await new Promise((resolve) => setTimeout(resolve, 200))
          continue
        }
        figures.errors++
        return
      }
    }
    figures.errors++
  }

  let next = 0
  async function worker(): Promise<void> {
    while (next < EVENTS && !deadline.aborted) {
      const id = next++
      const first = instances[id % instances.length] as Instance
      const second = instances[(id + 1) % instances.length] as Instance
      await Promise.all([send(id, first), send(id, second)])
      await send(id, instances[(id + 2) % instances.length] as Instance)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  latencies.sort((a, b) => a - b)
  const at = (q: number) => Math.round((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0) * 10) / 10
  return { ...figures, p50: at(0.5), p99: at(0.99), seconds: Math.round((performance.now() - started) / 100) / 10 }
}

function render(
  s: Figures & { events: number; instances: number; workers: number; handledOnce: number; handledTwice: number; neverHandled: number },
): string {
  return [
    `Measured with \`pnpm demo:cluster${s.workers > 0 ? ' --handoff' : ''} --write\`${s.workers > 0 ? ` (each delivery queued on BullMQ, run by ${s.workers} worker processes)` : ''} on Node ${process.versions.node}, ${cpus().length} cores, Redis ${redis.url.startsWith('redis://127.0.0.1') ? 'on loopback' : 'from REDIS_URL'}.`,
    '',
    '| events | instances | deliveries sent | duplicates answered 409 (in progress) | duplicates answered 200 (done) | handled exactly once | handled twice | never handled | errors | p50 ms | p99 ms | seconds |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| ${s.events} | ${s.instances} | ${s.deliveries} | ${s.duplicatesInProgress} | ${s.duplicatesDone} | ${s.handledOnce} | ${s.handledTwice} | ${s.neverHandled} | ${s.errors} | ${s.p50} | ${s.p99} | ${s.seconds} |`,
  ].join('\n')
}

function writeFigures(table: string): void {
  const text = readFileSync(REPORT, 'utf8')
  const start = text.indexOf(BEGIN)
  const end = text.indexOf(END)
  if (start === -1 || end === -1) throw new Error(`docs/reliability.md has no ${BEGIN} … ${END} block`)
  writeFileSync(REPORT, `${text.slice(0, start + BEGIN.length)}\n${table}\n${text.slice(end)}`)
  // biome formats Markdown tables (column padding) too; letting it do so keeps the lint clean.
  execFileSync(fileURLToPath(new URL('../../node_modules/.bin/biome', import.meta.url)), ['format', '--write', REPORT], { stdio: 'ignore' })
}
