import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sign } from '@hookguard/core'
import { afterEach, describe, expect, it } from 'vitest'
import { type ExportFormat, exportAs } from '../src/export.ts'
import type { InspectedRecord } from '../src/record.ts'
import { redactCredentials } from '../src/redact.ts'
import { detail } from '../src/view.ts'
import { cleanup, nodeApp, runExportedTests, runShell, SECRET } from './helpers.ts'

afterEach(cleanup)

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const PACKAGE = fileURLToPath(new URL('..', import.meta.url))
const TOKEN = 'tok0form0token0value'
const ENCODED_TOKEN = 'tok0encoded0name0value'
const CLIENT_SECRET = 'client0form0secret0value'
const APP_SECRET = 'app0form0secret0value'
const PASSWORD = 'pw0form0password0value'
const CREDENTIALS = [TOKEN, ENCODED_TOKEN, CLIENT_SECRET, APP_SECRET, PASSWORD]
/** Every credential field a form may carry, two of them under a percent-encoded name, around plain fields. */
const FORM = `event=order.paid&access_token=${TOKEN}&client_secret=${CLIENT_SECRET}&secr%65t=${APP_SECRET}&access%5Ftoken=${ENCODED_TOKEN}&password=${PASSWORD}&note=a%20b+c&x=-1`
const FORMATS: ExportFormat[] = ['send', 'curl', 'har', 'fixture', 'fixture-test']
const FORM_TYPE: [string, string] = ['Content-Type', 'application/x-www-form-urlencoded']

function formRecord(mode: InspectedRecord['mode'], body = FORM, extra: Partial<InspectedRecord> = {}): InspectedRecord {
  const bytes = new TextEncoder().encode(body)
  return {
    id: 5,
    kind: 'delivery',
    time: 0,
    source: 'sender',
    method: 'POST',
    url: '/hooks',
    headers: [['Host', '127.0.0.1:4319'], FORM_TYPE],
    body: bytes,
    bodyBytes: bytes.byteLength,
    mode,
    verdict: 'verified',
    status: 200,
    durationMs: 1,
    ...extra,
  }
}

const FILLED = {
  HOOKGUARD_ACCESS_TOKEN: 'fresh token &=+%',
  // A form's credential fields other than `access_token` were named by the sender: their own namespace.
  HOOKGUARD_SENT_CLIENT_SECRET: 'client-from-env',
  HOOKGUARD_SENT_SECRET: 'sent-secret-from-env',
  HOOKGUARD_SENT_PASSWORD: 'password-from-env',
  HOOKGUARD_APP_SECRET: 'app-from-env',
  HOOKGUARD_PASSWORD: 'hookguard-password',
  HOOKGUARD_SECRET: SECRET,
}

/** The form a command should send: each credential field's value from the environment. */
function expectedForm(received: Buffer): void {
  const parts = received.toString('latin1').split('&')
  expect(parts.map((part) => part.split('=')[0])).toEqual([
    'event',
    'access_token',
    'client_secret',
    'secr%65t',
    'access%5Ftoken',
    'password',
    'note',
    'x',
  ])
  // The fields that carry no credential keep their bytes.
  expect([parts[0], parts[6], parts[7]]).toEqual(['event=order.paid', 'note=a%20b+c', 'x=-1'])
  const fields = new URLSearchParams(received.toString('latin1'))
  expect(fields.getAll('access_token')).toEqual([FILLED.HOOKGUARD_ACCESS_TOKEN, FILLED.HOOKGUARD_ACCESS_TOKEN])
  expect(fields.get('client_secret')).toBe(FILLED.HOOKGUARD_SENT_CLIENT_SECRET)
  expect(fields.get('secret')).toBe(FILLED.HOOKGUARD_SENT_SECRET)
  expect(fields.get('password')).toBe(FILLED.HOOKGUARD_SENT_PASSWORD)
}

describe('credentials in a form body', () => {
  it('are replaced in the page’s detail: the body, its covered text', () => {
    const shown = detail(formRecord('secret'))
    const text = JSON.stringify(shown)
    for (const credential of CREDENTIALS) expect(text).not.toContain(credential)
    expect(Buffer.from(shown.bodyBase64, 'base64').toString()).toBe(
      'event=order.paid&access_token=[redacted]&client_secret=[redacted]&secr%65t=[redacted]&access%5Ftoken=[redacted]&password=[redacted]&note=a%20b+c&x=-1',
    )
  })

  for (const mode of ['secret', 'basic', 'oauth2', 'none'] as const) {
    for (const verdict of ['verified', 'refused'] as const) {
      it(`are in no export: mode ${mode}, ${verdict}`, () => {
        const record = formRecord(mode, FORM, verdict === 'refused' ? { verdict, status: 401, code: 'invalid_token' } : {})
        for (const format of FORMATS) {
          const { text } = exportAs(format, record, { url: 'http://127.0.0.1:4319', appId: 'app-1', username: 'u' })
          for (const credential of CREDENTIALS) expect(text, `${format} holds ${credential}`).not.toContain(credential)
        }
      })
    }
  }

  it('are read back from the environment by the curl command, the other bytes as received', async () => {
    const seen: Buffer[] = []
    const app = await nodeApp((req, res) => {
      const parts: Buffer[] = []
      req.on('data', (chunk: Buffer) => parts.push(chunk))
      req.on('end', () => {
        seen.push(Buffer.concat(parts))
        res.end('ok')
      })
    })
    const done = await runShell(exportAs('curl', formRecord('none'), { url: app.url }).text, FILLED)
    expect(done.stderr).toBe('')
    expectedForm(seen[0] ?? Buffer.alloc(0))
    // Not set: the command stops, naming the variable, and sends nothing.
    const stopped = await runShell(exportAs('curl', formRecord('none'), { url: app.url }).text, {})
    expect(stopped.code).not.toBe(0)
    expect(stopped.stderr).toMatch(/HOOKGUARD_/)
    expect(seen).toHaveLength(1)
  })

  it('are read back from the environment by the hookguard send command', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookguard-send-'))
    dirs.push(dir)
    // A stand-in for `hookguard` that writes the body it is given.
    writeFileSync(join(dir, 'hookguard'), '#!/bin/sh\ncat\n')
    chmodSync(join(dir, 'hookguard'), 0o755)
    const done = await runShell(exportAs('send', formRecord('secret'), { url: 'http://127.0.0.1:4319' }).text, {
      ...FILLED,
      PATH: `${dir}:${process.env.PATH}`,
    })
    expect(done.stderr).toBe('')
    expectedForm(Buffer.from(done.stdout, 'latin1'))
  })

  it('are replaced in a token request’s text when their name is percent-encoded, and a refresh token in its answer', () => {
    for (const body of [`grant_type=client_credentials&appid=app&secr%65t=${APP_SECRET}`, `client_id=app&client%5Fsecret=${APP_SECRET}`]) {
      expect(redactCredentials(body)).not.toContain(APP_SECRET)
    }
    const answer = `{"access_token":"${TOKEN}","refresh_token":"${PASSWORD}","expires_in":7200}`
    expect(redactCredentials(answer)).toBe('{"access_token":"[redacted]","refresh_token":"[redacted]","expires_in":7200}')
    expect(redactCredentials(`access_token=${TOKEN}&refresh_token=${PASSWORD}`)).toBe('access_token=[redacted]&refresh_token=[redacted]')
  })

  it('leave a fixture that still reproduces its verdict when run: re-signed in mode secret, a fresh form token in mode oauth2', async () => {
    // Mode secret reads a body as JSON: a form signed right is refused for its body, not its signature.
    const appSecret = 'app-secret-for-tests-0123456789ab'
    const signedForm = `event=order.paid&password=${PASSWORD}&x=1`
    const records = [
      formRecord('secret', signedForm, {
        id: 21,
        headers: [FORM_TYPE, ['X-Service-Hmac-Signature', await sign(signedForm, SECRET)]],
        verdict: 'refused',
        status: 400,
        code: 'invalid_json',
      }),
      formRecord('secret', signedForm, {
        id: 22,
        headers: [FORM_TYPE, ['X-Service-Hmac-Signature', 'ab'.repeat(32)]],
        verdict: 'refused',
        status: 401,
        code: 'invalid_signature',
      }),
      formRecord('oauth2', `event=order.paid&access_token=${TOKEN}&n=1`, { id: 23 }),
      formRecord('oauth2', `event=order.paid&access_token=${TOKEN}&n=1`, {
        id: 24,
        verdict: 'refused',
        status: 401,
        code: 'invalid_token',
      }),
    ]
    const context = { url: 'http://127.0.0.1:4319', appId: 'app-1' }
    const dir = join(PACKAGE, 'test', `.exported-${process.pid}-form`)
    mkdirSync(dir, { recursive: true })
    try {
      for (const record of records) {
        const fixture = exportAs('fixture', record, context)
        const test = exportAs('fixture-test', record, context)
        for (const text of [fixture.text, test.text]) for (const credential of CREDENTIALS) expect(text).not.toContain(credential)
        writeFileSync(join(dir, fixture.filename), fixture.text)
        writeFileSync(join(dir, test.filename), test.text)
      }
      const done = runExportedTests(dir, { HOOKGUARD_SECRET: SECRET, HOOKGUARD_APP_SECRET: appSecret })
      expect(done.output).toMatch(/4 passed/)
      expect(done.status).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
