/** The figures of a load run: a table for the terminal and the figures section of docs/reliability.md. */
import { readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'

const MiB = 1024 * 1024
const BEGIN = '<!-- load-figures:begin (written by load/run.ts --write; edits inside are overwritten) -->'
const END = '<!-- load-figures:end -->'

export interface Figures {
  adapter: string
  /** Answers in the measured run (warm-up excluded). */
  requests: number
  perSecond: number
  p99Ms: number
  /** Warm-up included: a wrong answer is wrong whenever it comes. */
  wrong: number
  serverErrors: number
  /** Connection errors and timeouts, as autocannon counts them. */
  errors: number
  rssStart: number
  rssEnd: number
  rssPeak: number
  /** V8 heap in use after a full GC: flat here while RSS grows means memory outside JS objects. */
  heapStart: number
  heapEnd: number
  /** Why this adapter failed; empty when it passed. */
  failures: string[]
}

export interface RunInfo {
  /** `machine()`, taken before the run loads the machine itself. */
  machine: string
  command: string
  durationSeconds: number
  warmupSeconds: number
  connections: number
  elapsedSeconds: number
}

const mib = (bytes: number) => (bytes / MiB).toFixed(1)

export function table(rows: readonly Figures[]): string {
  const header = [
    'adapter',
    'requests',
    'req/s',
    'p99 latency',
    'wrong answers',
    '5xx',
    'conn. errors',
    'RSS start → end (Δ)',
    'RSS peak',
    'heap start → end',
  ]
  const cells = rows.map((row) => {
    const delta = (row.rssEnd - row.rssStart) / MiB
    return [
      row.adapter,
      row.requests.toLocaleString('en-US'),
      Math.round(row.perSecond).toLocaleString('en-US'),
      `${row.p99Ms} ms`,
      String(row.wrong),
      String(row.serverErrors),
      String(row.errors),
      `${mib(row.rssStart)} → ${mib(row.rssEnd)} MiB (${delta >= 0 ? '+' : '−'}${Math.abs(delta).toFixed(1)})`,
      `${mib(row.rssPeak)} MiB`,
      `${mib(row.heapStart)} → ${mib(row.heapEnd)} MiB`,
    ]
  })
  // Padded the way biome formats Markdown tables, so that --write leaves `pnpm lint` clean.
  const widths = header.map((title, i) => Math.max(title.length, ...cells.map((line) => (line[i] as string).length)))
  const pad = (line: string[]) =>
    `| ${line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join(' | ')} |`
  const rule = `| ${widths.map((width, i) => (i === 0 ? '-'.repeat(width) : `${'-'.repeat(width - 1)}:`)).join(' | ')} |`
  return [pad(header), rule, ...cells.map(pad)].join('\n')
}

export function machine(): string {
  const cpus = os.cpus()
  const model = cpus[0]?.model.trim() ?? 'unknown CPU'
  // Throughput is only comparable between runs on an otherwise idle machine; the load average says whether it was.
  const [load1] = os.loadavg()
  return (
    `${cpus.length} × ${model}, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB memory, ${os.type()} ${os.release().split('.').slice(0, 2).join('.')} (${os.arch()}), ` +
    `Node ${process.version}; load average ${load1?.toFixed(2)} when the run began`
  )
}

function section(rows: readonly Figures[], info: RunInfo): string {
  const passed = rows.every((row) => row.failures.length === 0)
  const failures = rows.flatMap((row) => row.failures.map((failure) => `- ${row.adapter}: ${failure}`))
  return [
    BEGIN,
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} on ${info.machine}.`,
    '',
    `Each adapter: ${info.warmupSeconds} s warm-up, then ${info.durationSeconds} s of load from ${info.connections} connections ` +
      `(one request in flight each); whole run ${Math.round(info.elapsedSeconds)} s. Reproduce with:`,
    '',
    '```sh',
    info.command,
    '```',
    '',
    table(rows),
    '',
    passed ? 'Result: **pass**.' : ['Result: **fail**.', '', ...failures].join('\n'),
    '',
    END,
  ].join('\n')
}

/** Replaces the figures section of `file`, or appends one when the file has none yet. */
export async function writeFigures(file: string, rows: readonly Figures[], info: RunInfo): Promise<void> {
  let text = ''
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const start = text.indexOf(BEGIN)
  const end = text.indexOf(END)
  const fresh = section(rows, info)
  const next =
    start !== -1 && end > start
      ? text.slice(0, start) + fresh + text.slice(end + END.length)
      : `${text}${text === '' || text.endsWith('\n\n') ? '' : '\n'}${fresh}\n`
  await writeFile(file, next)
}
