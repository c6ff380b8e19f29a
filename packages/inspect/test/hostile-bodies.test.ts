import { afterEach, describe, expect, it } from 'vitest'
import { inspectCommand } from '../src/command.ts'
import { cleanup, nodeApp, SECRET, send } from './helpers.ts'

/**
 * Every request is recorded with its verdict, whatever the per-record work (the diagnosis, the
 * hint, the disagreement, the redaction, the `--json` line, the page's views) makes of its body.
 * Each hostile body goes through the command as a user runs it, as the receiver and in front of
 * an app that verifies nothing: the sender gets the status the contract gives, the row and its
 * `--json` line appear, and the page's views of it answer.
 */

afterEach(cleanup)

const text = (value: string) => new TextEncoder().encode(value)
const nested = (depth: number, open: string, close: string, inner = '') => text(open.repeat(depth) + inner + close.repeat(depth))

const BODIES: [string, Uint8Array][] = [
  ['10 000 nested arrays', nested(10_000, '[', ']')],
  ['100 000 nested arrays', nested(100_000, '[', ']')],
  ['50 000 nested objects', nested(50_000, '{"a":', '}', '1')],
  ['100 000 nested arrays inside a string-keyed object', text(`{"event":${'['.repeat(100_000)}${']'.repeat(100_000)}}`)],
  ['a key of 900 000 characters', text(`{"${'k'.repeat(900_000)}":1}`)],
  ['50 000 keys', text(`{${Array.from({ length: 50_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`)],
  ['invalid UTF-8', new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x3a, 0xed, 0xa0, 0x80, 0x7d])],
  ['lone surrogates, escaped', text('{"a":"\\ud800\\udfff\\ud800","b":"\\u0000"}')],
  ['1 MiB of characters Gson escapes', text(`"${"<>&='".repeat(200_000)}"`)],
  ['a form of 60 000 credential fields', text(Array.from({ length: 60_000 }, (_, i) => `secret${i}=x`).join('&'))],
  ['1 MiB of whitespace', new Uint8Array(1024 * 1024).fill(0x20)],
]

interface Run {
  receive: string
  ui: string
  token: string
  lines: () => Record<string, unknown>[]
  stop(): Promise<number>
}

async function command(args: string[], env: Record<string, string>): Promise<Run> {
  const out: string[] = []
  const controller = new AbortController()
  const done = inspectCommand(['--json', '--port', '0', '--ui-port', '0', ...args], {
    stdout: { write: (chunk: string) => out.push(...chunk.split('\n').filter((line) => line !== '')) },
    stderr: { write: () => {} },
    env,
    signal: controller.signal,
  })
  const deadline = Date.now() + 5_000
  while (out.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
  const ready = JSON.parse(out[0] ?? '{}') as { receive: string; ui: string }
  const ui = /^(http:\/\/[^/]+)\/#token=(.+)$/.exec(ready.ui)
  return {
    receive: ready.receive,
    ui: ui?.[1] ?? '',
    token: ui?.[2] ?? '',
    lines: () => out.slice(1).map((line) => JSON.parse(line) as Record<string, unknown>),
    stop: () => {
      controller.abort()
      return done
    },
  }
}

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
}

const SETUPS = [
  {
    name: 'as the receiver, mode secret',
    args: [] as string[],
    env: { HOOKGUARD_SECRET: SECRET },
    headers: { 'content-type': 'application/json', 'x-service-hmac-signature': 'ab'.repeat(32) },
    status: 401,
    line: { verdict: 'refused', code: 'invalid_signature' },
  },
  {
    name: 'as the receiver, mode none',
    args: ['--mode', 'none'],
    env: {},
    headers: { 'content-type': 'application/json' },
    // Authenticated (there is nothing to check), then refused or taken for its body.
    status: undefined,
    line: {},
  },
  {
    name: 'in front of an app that verifies nothing, mode secret',
    args: ['--forward-to'],
    env: { HOOKGUARD_SECRET: SECRET },
    headers: { 'content-type': 'application/json', 'x-service-hmac-signature': 'ab'.repeat(32) },
    status: 200,
    line: { verdict: 'refused', code: 'invalid_signature', appStatus: 200, disagreement: 'app_accepted' },
  },
] as const

describe('a hostile body', () => {
  for (const setup of SETUPS) {
    it(`is answered, recorded with its verdict and written as a --json line: ${setup.name}`, async () => {
      let args: string[] = [...setup.args]
      if (args[0] === '--forward-to') {
        const app = await nodeApp((req, res) => {
          req.resume()
          req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'))
        })
        args = ['--forward-to', app.url]
      }
      const run = await command(args, setup.env)
      try {
        for (const [index, [name, body]] of BODIES.entries()) {
          const answer = await send(`${run.receive}/hooks`, { headers: { ...setup.headers }, chunks: [body] })
          if (setup.status !== undefined) expect(answer.status, name).toBe(setup.status)
          else expect([200, 400], name).toContain(answer.status)
          await until(() => run.lines().length > index)
          const line = run.lines()[index]
          expect(line, name).toMatchObject({ type: 'delivery', id: index + 1, ...setup.line })
          // Its views answer: the row, its detail, a diff with the one before.
          const get = (path: string) => send(`${run.ui}${path}`, { method: 'GET', headers: { 'x-inspect-token': run.token } })
          expect((await get(`/api/records/${index + 1}`)).status, `${name}: detail`).toBe(200)
          if (index > 0) expect((await get(`/api/diff?a=${index}&b=${index + 1}`)).status, `${name}: diff`).toBe(200)
          for (const format of ['send', 'curl', 'har', 'fixture', 'fixture-test']) {
            expect((await get(`/api/records/${index + 1}/export/${format}`)).status, `${name}: export ${format}`).toBe(200)
          }
        }
        const state = JSON.parse(
          (await send(`${run.ui}/api/state`, { method: 'GET', headers: { 'x-inspect-token': run.token } })).body.toString(),
        )
        expect(state.records).toHaveLength(BODIES.length)
      } finally {
        expect(await run.stop()).toBe(0)
      }
    }, 120_000)
  }
})
