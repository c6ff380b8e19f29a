/**
 * What the inspector in front of an app adds to a delivery's round trip: 1 KiB signed deliveries
 * sent one at a time over a kept-alive connection, straight to the app and through
 * `hookguard inspect --forward-to` (the built `@hookguard/inspect`), and through a bare Node proxy
 * for reference (what any proxy hop costs), in rotating blocks so that drift on a shared machine
 * lands on all three. The figure is the difference of the medians. Start it
 * through run.ts (`pnpm bench --only inspect`), or alone: `node --import tsx bench/inspect.ts [--quick]`.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { Agent, request } from 'node:http'
import { fileURLToPath } from 'node:url'
import { sign } from '@hookguard/core'
import { makePayload } from '@hookguard/testkit/payload'
import { SECRET } from './http-server.ts'
import { median, quantile, RESULT_PREFIX } from './measure.ts'

const quick = process.argv.includes('--quick')
const BLOCK = 50
const BLOCKS = quick ? 6 : 60
const WARMUP = quick ? 100 : 500

export interface InspectFigures {
  runtime: string
  requests: number
  bodyBytes: number
  /** Milliseconds. */
  direct: { p50: number; p99: number }
  proxied: { p50: number; p99: number }
  /** A bare Node proxy: the cost of the hop alone. */
  bare: { p50: number; p99: number }
  overheadP50: number
  bareOverheadP50: number
}

const children: ChildProcess[] = []
process.on('exit', () => {
  for (const child of children) child.kill()
})

function start(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./inspect-server.ts', import.meta.url)), args, {
      execArgv: process.execArgv,
      stdio: 'inherit',
    })
    children.push(child)
    child.once('message', (message) => resolve((message as { url: string }).url))
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`inspect-server ${args[0]} exited with ${code}`)))
  })
}

const body = Buffer.from(makePayload('compact', 1024, '1 KiB').bytes)
const headers = {
  'content-type': 'application/json; charset=utf-8',
  'content-length': String(body.byteLength),
  'x-service-hmac-signature': await sign(body, SECRET),
}

function post(url: URL, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const req = request({ host: url.hostname, port: url.port, path: '/hooks', method: 'POST', headers, agent }, (res) => {
      res.resume()
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`answer ${res.statusCode}`))
        else resolve(performance.now() - started)
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

const app = new URL(await start(['app']))
const targets = {
  direct: app,
  proxied: new URL(await start(['inspector', app.href])),
  bare: new URL(await start(['proxy', app.href])),
}
const names = ['direct', 'proxied', 'bare'] as const
const agents = Object.fromEntries(names.map((name) => [name, new Agent({ keepAlive: true, maxSockets: 1 })])) as Record<
  (typeof names)[number],
  Agent
>
for (let i = 0; i < WARMUP; i++) for (const name of names) await post(targets[name], agents[name])
const times = { direct: [] as number[], proxied: [] as number[], bare: [] as number[] }
for (let block = 0; block < BLOCKS; block++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(block + k) % names.length] as (typeof names)[number]
    for (let i = 0; i < BLOCK; i++) times[name].push(await post(targets[name], agents[name]))
  }
}
const summary = (list: number[]) => ({ p50: median(list), p99: quantile(list, 0.99) })
const figures: InspectFigures = {
  runtime: `Node ${process.version}`,
  requests: times.direct.length,
  bodyBytes: body.byteLength,
  direct: summary(times.direct),
  proxied: summary(times.proxied),
  bare: summary(times.bare),
  overheadP50: median(times.proxied) - median(times.direct),
  bareOverheadP50: median(times.bare) - median(times.direct),
}
console.log(`${RESULT_PREFIX}${JSON.stringify(figures)}`)
for (const agent of Object.values(agents)) agent.destroy()
process.exit(0)
