import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sign } from '@hookguard/core'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { exportAs, printfBytes, shellQuote, toCurl, toHar, toSendCommand } from '../src/export.ts'
import { toFixture } from '../src/fixture.ts'
import { cleanup, inspector, nodeApp, recordOf, runExportedTests, SECRET } from './helpers.ts'

afterEach(cleanup)

const PACKAGE = fileURLToPath(new URL('..', import.meta.url))
const ROOT = join(PACKAGE, '..', '..')
/** Quotes, `%`, a backslash, a raw newline between members, UTF-8 and Gson's escapable characters. */
const TRICKY = '{"note": "it\'s 100% \\"quoted\\" \\\\ back\\nslash",\n "name": "Zoë 東京", "q": "a=b&c<d>"}'

function sh(command: string, env: Record<string, string> = {}) {
  return spawnSync('sh', ['-c', command], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 30_000 })
}

/** As {@link sh}, without blocking this process: the servers the command talks to run in it. */
function shAsync(command: string, env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { env: { ...process.env, ...env }, timeout: 30_000 })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ stdout, stderr, code }))
  })
}

describe('shellQuote and printfBytes', () => {
  it('quote anything for a POSIX shell', () => {
    expect(sh(`printf '%s' ${shellQuote('a\'b"c $HOME `x` \\n')}`).stdout).toBe('a\'b"c $HOME `x` \\n')
  })

  it('write every byte value back exactly through printf', () => {
    const all = new Uint8Array(256).map((_, i) => i)
    const run = spawnSync('sh', ['-c', `${printfBytes(all)} | od -An -v -tu1`], { encoding: 'utf8' })
    const bytes = run.stdout.trim().split(/\s+/).map(Number)
    expect(bytes).toEqual([...all])
  })

  for (const shell of ['bash', 'dash']) {
    it(`write a body that starts with a dash as it is, never as an option of printf (${shell})`, () => {
      for (const text of ['-1', '-n -e {}', '--', '-', '-%s\\n', '--help']) {
        const body = new TextEncoder().encode(text)
        const run = spawnSync(shell, ['-c', printfBytes(body)], { encoding: 'buffer' })
        expect(run.stderr.toString(), text).toBe('')
        expect(run.stdout.toString('latin1'), text).toBe(text)
      }
    })

    it(`make curl and hookguard send post such a body byte for byte (${shell})`, async () => {
      const dir = join(PACKAGE, 'test', `.dash-${process.pid}-${shell}`)
      mkdirSync(dir, { recursive: true })
      try {
        // Stand-ins that write the body they are given.
        for (const name of ['curl', 'hookguard']) {
          writeFileSync(join(dir, name), '#!/bin/sh\ncat\n')
          chmodSync(join(dir, name), 0o755)
        }
        for (const text of ['-1', '-n -e {}']) {
          const record = recordOf(new TextEncoder().encode(text), [['Content-Type', 'application/json']])
          for (const command of [
            toCurl(record, { url: 'http://127.0.0.1:4319' }),
            toSendCommand(record, { url: 'http://127.0.0.1:4319' }),
          ]) {
            const run = spawnSync(shell, ['-c', command], {
              encoding: 'buffer',
              env: { ...process.env, PATH: `${dir}:${process.env.PATH}`, HOOKGUARD_SECRET: SECRET },
            })
            expect(run.stderr.toString(), command).toBe('')
            expect(run.stdout.toString('latin1'), command).toBe(text)
          }
        }
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  }
})

describe('toCurl', () => {
  it('posts the exact bytes and headers when run', async () => {
    const received: { body: Buffer; raw: string[]; url: string }[] = []
    const app = await nodeApp((req, res) => {
      const parts: Buffer[] = []
      req.on('data', (c: Buffer) => parts.push(c))
      req.on('end', () => {
        received.push({ body: Buffer.concat(parts), raw: req.rawHeaders, url: req.url ?? '' })
        res.end('ok')
      })
    })
    const body = new Uint8Array([...new TextEncoder().encode(TRICKY), 0, 0xff, 0x0a])
    const record = recordOf(body, [
      ['Host', 'example'],
      ['Content-Type', 'application/json; charset=utf-8'],
      ['X-Service-Hmac-Signature', 'ab'.repeat(32)],
      ['Content-Length', String(body.byteLength)],
    ])
    const run = await shAsync(toCurl(record, { url: app.url }))
    expect(run.stderr).toBe('')
    expect(new Uint8Array(received[0]?.body ?? [])).toEqual(body)
    expect(received[0]?.url).toBe('/hooks?tenant=a')
    expect(received[0]?.raw).toEqual(expect.arrayContaining(['X-Service-Hmac-Signature', 'ab'.repeat(32)]))
  })

  it('never writes a Basic password: it reads it from the environment', () => {
    const auth = `Basic ${Buffer.from('hook-user:pa55word').toString('base64')}`
    const curl = toCurl(recordOf(new Uint8Array(), [['Authorization', auth]], { mode: 'basic' }), { url: 'http://127.0.0.1:1' })
    expect(curl).not.toContain(auth.split(' ')[1])
    expect(curl).toContain(`-u 'hook-user:'"\${HOOKGUARD_PASSWORD:?}"`)
  })
})

describe('toSendCommand', () => {
  it('re-sends the delivery through hookguard send, signed with the secret from the environment', async () => {
    const { inspector: running, waitFor } = await inspector()
    const body = new TextEncoder().encode(TRICKY)
    const command = toSendCommand(recordOf(body, []), { url: running.receiveUrl })
    expect(command).not.toContain(SECRET)
    expect(command).toContain('--mode secret')
    const bin = join(PACKAGE, 'test', `.exported-bin-${process.pid}`)
    mkdirSync(bin, { recursive: true })
    try {
      // `hookguard` from this repository's source, as the published bin would run.
      writeFileSync(
        join(bin, 'hookguard'),
        `#!/bin/sh\ncd ${shellQuote(ROOT)} && exec ${shellQuote(process.execPath)} --conditions=@hookguard/source --import tsx packages/emulator/src/cli.ts "$@"\n`,
      )
      chmodSync(join(bin, 'hookguard'), 0o755)
      const run = await shAsync(command, { HOOKGUARD_SECRET: SECRET, PATH: `${bin}:${process.env.PATH}` })
      expect(run.stdout).toContain('200')
    } finally {
      rmSync(bin, { recursive: true, force: true })
    }
    const [record] = await waitFor(1)
    expect(record).toMatchObject({ verdict: 'verified', url: '/hooks?tenant=a' })
    expect(record?.body).toEqual(body)
  })
})

describe('every export format, for any target a sender can write', () => {
  // The script property test reaches its receiver under a path of its own, so no target it
  // exports begins at the origin's root: this one does, and every format must be made.
  it('is made for a receiver at the root of its origin, whatever the target holds', () => {
    const formats = ['send', 'curl', 'har', 'fixture', 'fixture-test'] as const
    const printable = fc.array(fc.integer({ min: 0x21, max: 0x7e }), { maxLength: 16 }).map((codes) => String.fromCharCode(...codes))
    const target = fc.tuple(fc.constantFrom('', '/', '\\'), printable).map(([lead, rest]) => `/${lead}${rest}`)
    fc.assert(
      fc.property(target, fc.constantFrom(...formats), fc.constantFrom('secret', 'basic', 'oauth2', 'none'), (url, format, mode) => {
        const record = recordOf(new Uint8Array([0x7b, 0x7d]), [], { url, mode })
        expect(() => exportAs(format, record, { url: 'http://127.0.0.1:4319', username: 'hook-user', appId: 'app-1' }), url).not.toThrow()
      }),
      { numRuns: 2000 },
    )
  })
})

describe('toSendCommand, on a target a URL parser reads as a host', () => {
  // A path of `//host` or `/\\host` is a path to the receiver; resolved against the origin on its own,
  // it names another host, which for some bytes is no host at all and threw (a 500 from the page).
  for (const url of ['//H>W_L8', '//[::1', '/\\}{%ek4M%', '//evil.example/x?tenant=a', '/\\evil.example/x']) {
    it(`exports ${JSON.stringify(url)}, sent to the receiver's own origin`, () => {
      const command = toSendCommand(recordOf(new Uint8Array([0x7b, 0x7d]), [], { url }), { url: 'http://127.0.0.1:4319' })
      expect(command).toContain("hookguard send 'http://127.0.0.1:4319'")
      expect(command).not.toMatch(/hookguard send '?http:\/\/(?!127\.0\.0\.1:4319)/)
    })
  }
})

describe('toHar', () => {
  it('writes one HAR 1.2 entry, the body as text or base64, credentials left out', () => {
    const auth = `Basic ${Buffer.from('u:secret-pw').toString('base64')}`
    const har = JSON.parse(
      toHar(recordOf(new TextEncoder().encode(TRICKY), [['Authorization', auth]], { url: '/h?access_token=tok123' }), {
        url: 'http://127.0.0.1:4319',
      }),
    )
    const entry = har.log.entries[0]
    expect(har.log.version).toBe('1.2')
    expect(entry.request.postData.text).toBe(TRICKY)
    expect(JSON.stringify(har)).not.toContain('tok123')
    expect(JSON.stringify(har)).not.toContain(auth.split(' ')[1])
    const binary = JSON.parse(toHar(recordOf(new Uint8Array([0xff, 0]), []), { url: 'http://127.0.0.1:4319' }))
    expect(binary.log.entries[0].request.postData).toMatchObject({ encoding: 'base64', text: '/wA=' })
  })
})

describe('the Vitest fixture', () => {
  it('keeps the request without its credentials', () => {
    const fixture = toFixture(
      recordOf(
        new Uint8Array([1]),
        [
          ['Authorization', 'Bearer x'],
          ['X-A', '1'],
        ],
        { url: '/h?access_token=t&b=2', verdict: 'refused', code: 'invalid_token', status: 401 },
      ),
    )
    expect(fixture).toMatchObject({
      path: '/h?b=2',
      headers: [['X-A', '1']],
      authenticated: true,
      expected: { verdict: 'refused', code: 'invalid_token', status: 401 },
    })
  })

  it('passes when run, for a verified delivery and a refused one', async () => {
    const body = new TextEncoder().encode(TRICKY)
    const verified = recordOf(body, [
      ['content-type', 'application/json'],
      ['x-service-hmac-signature', await sign(body, SECRET)],
    ])
    const refused = recordOf(body, [['x-service-hmac-signature', 'zz']], {
      id: 8,
      verdict: 'refused',
      status: 401,
      code: 'invalid_signature',
    })
    const dir = join(PACKAGE, 'test', `.exported-${process.pid}-unit`)
    mkdirSync(dir, { recursive: true })
    try {
      for (const record of [verified, refused]) {
        const context = { url: 'http://127.0.0.1:4319' }
        const fixture = exportAs('fixture', record, context)
        const test = exportAs('fixture-test', record, context)
        writeFileSync(join(dir, fixture.filename), fixture.text)
        writeFileSync(join(dir, test.filename), test.text)
      }
      const run = runExportedTests(dir, { HOOKGUARD_SECRET: SECRET })
      expect(run.output).toMatch(/2 passed/)
      expect(run.status).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it('reproduces a refusal for its credentials when run: a Basic delivery keeps its user name with a wrong password', async () => {
    const user = 'hook-user'
    const password = 'basic-password-for-tests'
    const appSecret = 'app-secret-for-tests-0123456789ab'
    const body = new TextEncoder().encode('{"event":"ping"}')
    const basic = (pw: string) => `Basic ${Buffer.from(`${user}:${pw}`).toString('base64')}`
    const records = [
      // A near miss of the real password: it must not be written out, and the test must still be refused.
      recordOf(body, [['Authorization', basic('basic-password-for-test')]], {
        id: 11,
        mode: 'basic',
        verdict: 'refused',
        status: 401,
        code: 'invalid_credentials',
      }),
      // Refused for its body, with the right credentials: the test authenticates from the environment.
      recordOf(new TextEncoder().encode('not json'), [['Authorization', basic(password)]], {
        id: 12,
        mode: 'basic',
        verdict: 'refused',
        status: 400,
        code: 'invalid_json',
      }),
      recordOf(body, [['Authorization', basic(password)]], { id: 13, mode: 'basic' }),
      recordOf(body, [], {
        id: 14,
        mode: 'oauth2',
        url: '/h?access_token=an-expired-token',
        verdict: 'refused',
        status: 401,
        code: 'invalid_token',
      }),
    ]
    const context = { url: 'http://127.0.0.1:4319', username: user, appId: 'app-1' }
    const dir = join(PACKAGE, 'test', `.exported-${process.pid}-credentials`)
    mkdirSync(dir, { recursive: true })
    try {
      for (const record of records) {
        const fixture = exportAs('fixture', record, context)
        const test = exportAs('fixture-test', record, context)
        for (const text of [fixture.text, test.text]) {
          expect(text).not.toContain(Buffer.from(`${user}:basic-password-for-test`).toString('base64'))
          expect(text).not.toContain('an-expired-token')
        }
        writeFileSync(join(dir, fixture.filename), fixture.text)
        writeFileSync(join(dir, test.filename), test.text)
      }
      const run = runExportedTests(dir, { HOOKGUARD_PASSWORD: password, HOOKGUARD_APP_SECRET: appSecret })
      expect(run.output).toMatch(/4 passed/)
      expect(run.status).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe('the reported cases, each as it was found', () => {
  const FORM: [string, string] = ['Content-Type', 'application/x-www-form-urlencoded']

  async function capturing() {
    const seen: { method: string; url: string; raw: string[]; body: Buffer }[] = []
    const app = await nodeApp((req, res) => {
      const parts: Buffer[] = []
      req.on('data', (chunk: Buffer) => parts.push(chunk))
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', raw: req.rawHeaders, body: Buffer.concat(parts) })
        res.end('ok')
      })
    })
    return { ...app, seen }
  }

  for (const shell of ['sh', 'bash']) {
    it(`a form field's name with a newline runs nothing, in curl and send (${shell})`, async () => {
      // Outside the repository: a run that is killed before its cleanup leaves nothing in the tree.
      const dir = mkdtempSync(join(tmpdir(), `hookguard-pwned-${shell}-`))
      try {
        writeFileSync(join(dir, 'hookguard'), '#!/bin/sh\ncat >/dev/null\n')
        chmodSync(join(dir, 'hookguard'), 0o755)
        const app = await capturing()
        const body = new TextEncoder().encode('event=x&x\ntouch pwned #secret=v')
        for (const format of ['curl', 'send'] as const) {
          const { text } = exportAs(format, recordOf(body, [FORM], { verdict: 'refused' }), { url: app.url })
          // Not spawnSync: the app that curl posts to runs in this process.
          const run = await new Promise<number | null>((resolve, reject) => {
            const child = spawn(shell, ['-c', text], {
              cwd: dir,
              stdio: 'ignore',
              timeout: 30_000,
              env: {
                ...process.env,
                PATH: `${dir}:${process.env.PATH}`,
                HOOKGUARD_SECRET: SECRET,
                HOOKGUARD_SENT_X_TOUCH_PWNED_SECRET: 'v',
              },
            })
            child.on('error', reject)
            child.on('close', resolve)
          })
          expect(run, text).toBe(0)
          expect(spawnSync('ls', [dir], { encoding: 'utf8' }).stdout.split('\n'), text).not.toContain('pwned')
        }
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  }

  it('curl says so when two credential headers read one variable, their names alike in capitals or the same', () => {
    for (const second of ['x_secret-', 'X-Secret']) {
      const headers: [string, string][] = [
        ['X-Secret', 'one'],
        [second, 'two'],
      ]
      const text = toCurl(recordOf(new Uint8Array(), headers, { method: 'GET' }), { url: 'http://127.0.0.1:1' })
      expect(text).toContain(`# Differs from the recording: header ${second}: its value is read from HOOKGUARD_SENT_X_SECRET`)
    }
    const alone = toCurl(recordOf(new Uint8Array(), [['X-Secret', 'one']], { method: 'GET' }), { url: 'http://127.0.0.1:1' })
    expect(alone).not.toContain('# Differs from the recording: header X-Secret')
  })

  it('says so when two credentials of a query, a form or a header and a query read one variable', () => {
    const form: [string, string][] = [['content-type', 'application/x-www-form-urlencoded']]
    const url = { url: 'http://127.0.0.1:1' }
    const query = recordOf(new Uint8Array(), [], { method: 'GET', url: '/h?x-secret=one&x_secret=two' })
    const body = recordOf(Buffer.from('api-key=one&api_key=two'), form, { url: '/h' })
    // curl writes the target before the headers; hookguard send writes no header of the sender's.
    const both = recordOf(new Uint8Array(), [['X-Secret', 'one']], { method: 'GET', url: '/h?x_secret=two' })
    const cases: [string, string, string][] = [
      [toCurl(query, url), "query 'x_secret'", 'HOOKGUARD_SENT_X_SECRET'],
      [toSendCommand(query, url), "query 'x_secret'", 'HOOKGUARD_SENT_X_SECRET'],
      [toCurl(body, url), "form 'api_key'", 'HOOKGUARD_SENT_API_KEY'],
      [toSendCommand(body, url), "form 'api_key'", 'HOOKGUARD_SENT_API_KEY'],
      [toCurl(both, url), 'header X-Secret', 'HOOKGUARD_SENT_X_SECRET'],
    ]
    for (const [text, second, variable] of cases)
      expect(text, text).toContain(`# Differs from the recording: ${second}: its value is read from ${variable}`)
    // hookguard's own token is meant to be read wherever the recording had one: no difference said.
    const tokens = toCurl(recordOf(new Uint8Array(), [['Authorization', 'Bearer t1']], { method: 'GET', url: '/h?access_token=t2' }), {
      url: 'http://127.0.0.1:1',
    })
    expect(tokens).not.toContain('its value is read from')
  })

  it('curl sends a path with [1-40] or {a,b,c} once, as recorded', async () => {
    const app = await capturing()
    for (const url of ['/webhooks?page=[1-40]', '/{a,b,c}']) {
      const run = await shAsync(toCurl(recordOf(new Uint8Array(), [], { url, method: 'GET' }), { url: app.url }))
      expect(run.stderr).toBe('')
    }
    expect(app.seen.map(({ url }) => url)).toEqual(['/webhooks?page=[1-40]', '/{a,b,c}'])
  })

  it("a sender's `_secret` or `.secret` never reads hookguard's own HOOKGUARD_SECRET", () => {
    const query = recordOf(new Uint8Array(), [], { url: '/h?_secret=x' })
    const form = recordOf(new TextEncoder().encode('.secret=x'), [FORM])
    for (const record of [query, form]) {
      for (const text of [toCurl(record, { url: 'http://127.0.0.1:1' }), toSendCommand(record, { url: 'http://127.0.0.1:1' })]) {
        expect(text).toContain('HOOKGUARD_SENT_SECRET')
        expect(text.replace(/^# Needs HOOKGUARD_SECRET in the environment\.$/m, '')).not.toMatch(/HOOKGUARD_SECRET\b/)
      }
    }
  })

  it('curl adds no header the record did not have, and keeps one with an empty value', async () => {
    const app = await capturing()
    const body = new TextEncoder().encode('{}')
    const headers: [string, string][] = [
      ['Host', 'example'],
      ['X-Empty', ''],
      ['content-length', '2'],
    ]
    const run = await shAsync(toCurl(recordOf(body, headers), { url: app.url }))
    expect(run.stderr).toBe('')
    expect(app.seen[0]?.raw.filter((_, i, raw) => i % 2 === 0 && raw[i] !== 'Host')).toEqual(['X-Empty', 'content-length'])
    expect(app.seen[0]?.raw[app.seen[0].raw.indexOf('X-Empty') + 1]).toBe('')
    expect(app.seen[0]?.body).toEqual(Buffer.from(body))
  })

  it('hookguard send says that it re-encodes a path it cannot send as recorded', () => {
    const text = toSendCommand(recordOf(new Uint8Array(), [], { url: '/{a}' }), { url: 'http://127.0.0.1:1' })
    expect(text).toMatch(/^# Differs from the recording: target: /m)
    const plain = toSendCommand(recordOf(new Uint8Array(), [], { url: '/a?b=c' }), { url: 'http://127.0.0.1:1' })
    expect(plain).not.toMatch(/^# Differs from the recording: target: /m)
  })

  it('hookguard send says that a recorded .. segment takes it up a level', () => {
    for (const url of ['/..?a=b', '/a/../b', '/%2e%2e']) {
      const text = toSendCommand(recordOf(new Uint8Array(), [], { url }), { url: 'http://127.0.0.1:1/hooks' })
      expect(text, url).toMatch(/^# Differs from the recording: target: .*resolving \. and \.\. segments/m)
    }
  })
})
