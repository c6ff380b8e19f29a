import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { type ExportFormat, exportAs } from '../src/export.ts'
import type { InspectedRecord } from '../src/record.ts'
import { detail } from '../src/view.ts'
import { cleanup, nodeApp, runShell } from './helpers.ts'

afterEach(cleanup)

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const SIGNING_SECRET = 'whsec0signing0secret0value'
const PASSWORD = 'pw0basic0password0value'
const APP_SECRET = 'app0secret0value0for0oauth'
const TOKEN = 'tok0access0token0value0xyz'
const CLIENT_SECRET = 'client0secret0form0value'
const CREDENTIALS = [SIGNING_SECRET, PASSWORD, APP_SECRET, TOKEN, CLIENT_SECRET]

const FORMATS: ExportFormat[] = ['send', 'curl', 'har', 'fixture', 'fixture-test']
const MODES = ['secret', 'basic', 'oauth2', 'none'] as const

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`

/** A delivery carrying every credential a sender may put in a request, everywhere it may put one. */
function loaded(mode: InspectedRecord['mode'], verdict: InspectedRecord['verdict']): InspectedRecord {
  const body = new TextEncoder().encode('{"event":"ping"}')
  return {
    id: 3,
    kind: 'delivery',
    time: 0,
    source: 'sender',
    method: 'POST',
    // A token request to `/token/` is not the token address (`/token`): it is recorded as a delivery.
    url: `/token/?appid=app-1&secret=${APP_SECRET}&grant_type=client_credentials&access_token=${TOKEN}&password=${PASSWORD}&Client%5FSecret=${CLIENT_SECRET}&x=%20`,
    headers: [
      ['Host', '127.0.0.1:4319'],
      ['Content-Type', 'application/json'],
      ['Authorization', mode === 'oauth2' ? `Bearer ${TOKEN}` : basic('hook-user', PASSWORD)],
      ['Proxy-Authorization', basic('proxy-user', PASSWORD)],
      ['Cookie', `hookguard_inspect_4040=${TOKEN}; other=${SIGNING_SECRET}`],
      ['X-Service-Hmac-Signature', 'ab'.repeat(32)],
    ],
    body,
    bodyBytes: body.byteLength,
    mode,
    verdict,
    status: verdict === 'verified' ? 200 : 401,
    ...(verdict === 'refused' && {
      code: mode === 'basic' ? 'invalid_credentials' : mode === 'oauth2' ? 'invalid_token' : 'invalid_signature',
    }),
    app: {
      status: 200,
      headers: [
        ['Content-Type', 'application/json'],
        ['Set-Cookie', `session=${TOKEN}`],
      ],
      body: new TextEncoder().encode(`{"access_token":"${TOKEN}","expires_in":7200,"secret":"${APP_SECRET}"}`),
      durationMs: 1,
    },
    durationMs: 1,
  }
}

const context = { url: 'http://127.0.0.1:4319', username: 'hook-user', appId: 'app-1' }

describe('the page’s detail of a delivery', () => {
  it('holds no secret, password or token either: an app’s answer to `/token/` carries one', () => {
    const text = JSON.stringify(detail(loaded('oauth2', 'refused')))
    for (const credential of CREDENTIALS) expect(text).not.toContain(credential)
  })
})

describe('every export', () => {
  for (const mode of MODES) {
    for (const verdict of ['verified', 'refused'] as const) {
      it(`holds no secret, password or token: mode ${mode}, ${verdict}`, () => {
        const record = loaded(mode, verdict)
        for (const format of FORMATS) {
          const { text } = exportAs(format, record, context)
          for (const credential of CREDENTIALS) expect(text, `${format} holds ${credential}`).not.toContain(credential)
          expect(text, format).not.toContain(basic('hook-user', PASSWORD).split(' ')[1])
          expect(text, format).not.toContain(basic('proxy-user', PASSWORD).split(' ')[1])
        }
      })
    }
  }
})

/** What an app received: the request line's target and the raw header lines. */
async function receivingApp() {
  const seen: { url: string; rawHeaders: string[]; body: Buffer }[] = []
  const app = await nodeApp((req, res) => {
    const parts: Buffer[] = []
    req.on('data', (chunk: Buffer) => parts.push(chunk))
    req.on('end', () => {
      seen.push({ url: req.url ?? '', rawHeaders: req.rawHeaders, body: Buffer.concat(parts) })
      res.end('ok')
    })
  })
  return { ...app, seen }
}

describe('a credential left out of a command', () => {
  const filled = {
    // The names a sender chose map under HOOKGUARD_SENT_, never onto hookguard's own variables.
    HOOKGUARD_SENT_SECRET: 'from env &=+%',
    HOOKGUARD_ACCESS_TOKEN: 'token-from-env',
    HOOKGUARD_SENT_PASSWORD: 'password-from-env',
    HOOKGUARD_PASSWORD: 'basic-password',
    HOOKGUARD_SENT_CLIENT_SECRET: 'client-from-env',
    HOOKGUARD_SENT_COOKIE: 'a=b',
  }

  it('is read back from the environment by the curl command', async () => {
    const app = await receivingApp()
    const { text } = exportAs('curl', loaded('secret', 'refused'), { url: app.url })
    const done = await runShell(text, filled)
    expect(done.stderr).toBe('')
    const query = new URL(app.seen[0]?.url ?? '', 'http://x').searchParams
    expect(query.get('secret')).toBe(filled.HOOKGUARD_SENT_SECRET)
    expect(query.get('access_token')).toBe(filled.HOOKGUARD_ACCESS_TOKEN)
    expect(query.get('password')).toBe(filled.HOOKGUARD_SENT_PASSWORD)
    expect(query.get('Client_Secret')).toBe(filled.HOOKGUARD_SENT_CLIENT_SECRET)
    expect(query.get('appid')).toBe('app-1')
    // The parameters that carry no credential keep their bytes and their places.
    expect(app.seen[0]?.url).toMatch(
      /^\/token\/\?appid=app-1&secret=[^&]*&grant_type=client_credentials&access_token=[^&]*&password=[^&]*&Client%5FSecret=[^&]*&x=%20$/,
    )
    expect(app.seen[0]?.rawHeaders).toEqual(expect.arrayContaining(['Cookie', 'a=b']))
  })

  it('stops the curl command, saying which, when it is not set', async () => {
    const app = await receivingApp()
    const { text } = exportAs('curl', loaded('secret', 'refused'), { url: app.url })
    const done = await runShell(text, {})
    expect(done.code).not.toBe(0)
    expect(done.stderr).toMatch(/HOOKGUARD_/)
    expect(app.seen).toHaveLength(0)
  })

  it('is read back from the environment by the hookguard send command', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookguard-send-'))
    dirs.push(dir)
    // A stand-in for `hookguard` that prints the arguments it is given.
    writeFileSync(join(dir, 'hookguard'), '#!/bin/sh\ncat >/dev/null\nprintf "%s\\n" "$@"\n')
    chmodSync(join(dir, 'hookguard'), 0o755)
    const { text } = exportAs('send', loaded('basic', 'refused'), context)
    const done = await runShell(text, { ...filled, PATH: `${dir}:${process.env.PATH}` })
    expect(done.stderr).toBe('')
    const url = new URL(done.stdout.split('\n')[1] ?? '')
    expect(url.pathname).toBe('/token/')
    expect(url.searchParams.get('secret')).toBe(filled.HOOKGUARD_SENT_SECRET)
    expect(url.searchParams.get('password')).toBe(filled.HOOKGUARD_SENT_PASSWORD)
    expect(url.searchParams.get('access_token')).toBe(filled.HOOKGUARD_ACCESS_TOKEN)
  })
})

describe('a header value that is not ASCII', () => {
  // Node reads header bytes as latin1: UTF-8 arrives as one character per byte.
  const utf8 = Buffer.from('Zoë 東京', 'utf8').toString('latin1')
  const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9]).toString('latin1')

  function withHeaders(): InspectedRecord {
    return {
      ...loaded('none', 'verified'),
      url: '/hooks',
      headers: [
        ['X-Name', utf8],
        ['X-Latin1', latin1],
      ],
    }
  }

  it('is sent by the curl command as the bytes received', async () => {
    const app = await receivingApp()
    const done = await runShell(exportAs('curl', withHeaders(), { url: app.url }).text, {})
    expect(done.stderr).toBe('')
    const raw = app.seen[0]?.rawHeaders ?? []
    expect(Buffer.from(raw[raw.indexOf('X-Name') + 1] ?? '', 'latin1')).toEqual(Buffer.from('Zoë 東京', 'utf8'))
    expect(Buffer.from(raw[raw.indexOf('X-Latin1') + 1] ?? '', 'latin1')).toEqual(Buffer.from([0x63, 0x61, 0x66, 0xe9]))
  })

  it('is written in HAR as the text it encodes', () => {
    const har = JSON.parse(exportAs('har', withHeaders(), context).text)
    const headers = har.log.entries[0].request.headers as { name: string; value: string }[]
    expect(headers.find((h) => h.name === 'X-Name')?.value).toBe('Zoë 東京')
    // Not UTF-8: each byte is its latin1 character, as HTTP's obs-text reads.
    expect(headers.find((h) => h.name === 'X-Latin1')?.value).toBe('café')
  })
})
