import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CREDENTIAL_PLACES, type CredentialPlace, encodedForms, PLACED_APP_ID } from '@hookguard/testkit/credentials'
import { afterEach, describe, expect, it } from 'vitest'
import { inspectCommand } from '../src/command.ts'
import { cleanup, nodeApp, send } from './helpers.ts'

/**
 * Every place a sender can put a credential, crossed with every output the inspector has: a
 * canary value, unique to its place, must appear in none. The places are requests sent to a
 * running `hookguard inspect`; the outputs are read the way a user reads them (the page's API,
 * its event stream, each export through the API, `--json` and the terminal lines). A new place
 * or a new output is one row (the places are shared: the hand-off's jobs and dead letters are
 * checked for the same ones).
 */

afterEach(cleanup)
const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const APP_ID = PLACED_APP_ID
const APP_SECRET = 'app-secret-for-outputs-0123456789'

/** The app's answer to every request: a token answer, as a token address gives (`/token/` is recorded as a delivery). */
const APP_COOKIE = 'canary-app-cookie-0a3'
const ANSWER = { access_token: 'canary-answer-access-0a1', refresh_token: 'canary-answer-refresh-0a2', expires_in: 7200 }

/** The places every output is checked for (the shared table), and the inspector's own: what the app answered. */
const PLACES: CredentialPlace[] = [
  ...CREDENTIAL_PLACES,
  { name: 'the app’s answer: Set-Cookie', canary: APP_COOKIE, request: { path: '/hooks', body: '{}' } },
  { name: 'the oauth token answer: access_token', canary: ANSWER.access_token, request: { path: '/token/', body: '{}' } },
  { name: 'the oauth token answer: refresh_token', canary: ANSWER.refresh_token, request: { path: '/token/', body: '{}' } },
]

interface Running {
  lines: string[]
  stderr: string[]
  receive: string
  ui: string
  token: string
  stop(): Promise<number>
}

/** `hookguard inspect` with these arguments, in front of an app that answers every request with {@link ANSWER}. */
async function command(args: string[]): Promise<Running> {
  const app = await nodeApp((req, res) => {
    req.resume()
    req.on('end', () =>
      res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': `session=${APP_COOKIE}` }).end(JSON.stringify(ANSWER)),
    )
  })
  const lines: string[] = []
  const stderr: string[] = []
  const controller = new AbortController()
  const done = inspectCommand(['--mode', 'oauth2', '--port', '0', '--ui-port', '0', '--forward-to', app.url, ...args], {
    stdout: { write: (text: string) => lines.push(...text.split('\n').filter((line) => line !== '')) },
    stderr: { write: (text: string) => stderr.push(text) },
    env: { HOOKGUARD_APPID: APP_ID, HOOKGUARD_APP_SECRET: APP_SECRET },
    signal: controller.signal,
  })
  const deadline = Date.now() + 5_000
  while (!lines.some((line) => line.includes('#token=')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
  const text = lines.join('\n')
  const receive = /(http:\/\/127\.0\.0\.1:\d+)(?:\/| and|")/.exec(text)?.[1] ?? ''
  const ui = /(http:\/\/127\.0\.0\.1:\d+)\/#token=([\w-]+)/.exec(text)
  return {
    lines,
    stderr,
    receive,
    ui: ui?.[1] ?? '',
    token: ui?.[2] ?? '',
    stop: () => {
      controller.abort()
      return done
    },
  }
}

async function sendAll(receive: string): Promise<void> {
  for (const { request } of PLACES) {
    await send(`${receive}${request.path}`, {
      method: request.method ?? 'POST',
      headers: request.headers ?? {},
      chunks: request.body === undefined ? [] : [request.body],
    })
  }
}

/** Waits, bounded, until `check` holds. */
async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
}

/** The page's event stream, as text, read until `count` records came or the time is up. */
async function readEvents(ui: string, token: string, started: () => Promise<void>, count: number): Promise<string> {
  const controller = new AbortController()
  const answer = await fetch(`${ui}/api/events`, { headers: { 'x-inspect-token': token }, signal: controller.signal })
  const reader = (answer.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let text = ''
  const deadline = setTimeout(() => controller.abort(), 10_000)
  const reading = (async () => {
    try {
      while ((text.match(/event: record/g) ?? []).length < count) {
        const { value, done } = await reader.read()
        if (done) break
        text += decoder.decode(value, { stream: true })
      }
    } catch {
      // Aborted at the deadline: what was read is checked.
    }
  })()
  await started()
  await reading
  clearTimeout(deadline)
  controller.abort()
  return text
}

describe('a credential a sender puts anywhere', () => {
  it('appears in no output: the page’s API, each export, the diff, the event stream, --json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookguard-outputs-'))
    dirs.push(dir)
    const save = join(dir, 'records.ndjson')
    const running = await command(['--json', '--save', save])
    const get = async (path: string) => {
      const answer = await send(`${running.ui}${path}`, { method: 'GET', headers: { 'x-inspect-token': running.token } })
      expect(answer.status, path).toBe(200)
      return answer.body.toString('latin1')
    }

    const events = await readEvents(running.ui, running.token, () => sendAll(running.receive), PLACES.length)
    await until(() => running.lines.length > PLACES.length)
    const state = JSON.parse(await get('/api/state')) as { records: { id: number; kind: string }[] }
    expect(state.records).toHaveLength(PLACES.length)
    // Each output holds every record: a check of an empty output would prove nothing.
    expect(events.match(/event: record/g) ?? []).toHaveLength(PLACES.length)
    expect(running.lines).toHaveLength(1 + PLACES.length)
    const deliveries = state.records.filter((r) => r.kind === 'delivery').map((r) => r.id)

    const outputs: [string, string][] = [
      ['list API (/api/state)', JSON.stringify(state)],
      ['event stream (/api/events)', events],
    ]
    for (const { id } of state.records) outputs.push([`detail API #${id}`, await get(`/api/records/${id}`)])
    for (const id of deliveries) {
      for (const format of ['send', 'curl', 'har', 'fixture', 'fixture-test']) {
        outputs.push([`export ${format} #${id}`, await get(`/api/records/${id}/export/${format}?download`)])
      }
      for (const other of deliveries) outputs.push([`diff API #${id}/#${other}`, await get(`/api/diff?a=${id}&b=${other}`)])
    }
    expect(await running.stop()).toBe(0)
    outputs.push(['--json lines', running.lines.join('\n')], ['stderr', running.stderr.join('')])

    for (const place of PLACES) {
      for (const [output, text] of outputs) {
        expect(text, `${place.name} in the ${output}`).not.toContain(place.canary)
        for (const encoded of encodedForms(place)) expect(text, `${place.name}, encoded, in the ${output}`).not.toContain(encoded)
      }
    }
    // The save file is the store replays read after a restart: it keeps what was received, for
    // its owner only, as the docs say.
    expect(statSync(save).mode & 0o777).toBe(0o600)
    expect(
      readFileSync(save, 'utf8')
        .split('\n')
        .filter((line) => line !== ''),
    ).toHaveLength(PLACES.length)
  }, 60_000)

  it('appears in none of the terminal lines', async () => {
    const running = await command([])
    await sendAll(running.receive)
    await until(() => running.lines.length >= 3 + PLACES.length)
    expect(await running.stop()).toBe(0)
    expect(running.lines.length).toBeGreaterThanOrEqual(3 + PLACES.length)
    const text = running.lines.join('\n') + running.stderr.join('')
    for (const place of PLACES) {
      expect(text, place.name).not.toContain(place.canary)
      for (const encoded of encodedForms(place)) expect(text, place.name).not.toContain(encoded)
    }
  }, 30_000)
})
