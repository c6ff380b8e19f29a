// The whole loop on loopback: Express, Koa and Hono receivers in all four modes, fed by the
// emulator with genuine and forged deliveries. Exits 0 only if every answer is the expected one.
// Run: pnpm demo
import { styleText } from 'node:util'
import { CASES } from './demo/cases.ts'
import { startReceivers } from './demo/receivers.ts'

const colour = process.stdout.isTTY && !process.env.NO_COLOR
const paint = (style: 'green' | 'red' | 'dim', text: string) => (colour ? styleText(style, text, { validateStream: false }) : text)
const describe = ({ status, error }: { status: number; error?: string | undefined }) => (error ? `${status} ${error}` : `${status}`)

const started = performance.now()
const receivers = await startReceivers()
const rows: string[][] = []
let wrong = 0
try {
  for (const receiver of receivers) {
    for (const c of CASES) {
      const got = await c.run(receiver.url)
      const ok = got.status === c.expect.status && got.error === c.expect.error
      if (!ok) wrong++
      const verdict = ok ? (got.status < 300 ? 'accepted' : 'refused') : `UNEXPECTED (wanted ${describe(c.expect)})`
      rows.push([receiver.framework, c.mode, c.name, describe(got), ok ? paint('green', `✓ ${verdict}`) : paint('red', `✗ ${verdict}`)])
    }
  }
} finally {
  await Promise.all(receivers.map((r) => r.close()))
}

const header = ['framework', 'mode', 'case', 'answer', 'verdict']
const width = (i: number) => Math.max(...[header, ...rows].map((row) => (row[i] ?? '').length))
const line = (row: string[]) => row.map((cell, i) => (i < row.length - 1 ? cell.padEnd(width(i)) : cell)).join('  ')
console.log(paint('dim', line(header)))
for (const row of rows) console.log(line(row))
const seconds = ((performance.now() - started) / 1000).toFixed(1)
console.log(`\n${rows.length - wrong} of ${rows.length} answers as expected, in ${seconds} s.`)
process.exitCode = wrong === 0 ? 0 : 1
