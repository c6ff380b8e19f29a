import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sign } from '@hookguard/core'
import type { Reply } from '@hookguard/testkit/http'
import { refusedOrigin } from '@hookguard/testkit/ports'
import { type Connection, connect, head } from '@hookguard/testkit/wire'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import packageJson from '../package.json' with { type: 'json' }
import { listenCommand } from '../src/cli/commands/listen.ts'
import { run } from '../src/cli/run.ts'
import { deliver } from '../src/deliver.ts'
import { sampleEvent } from '../src/samples.ts'
import { serialize } from '../src/serialize.ts'
import { captureIo, closeServers, fixtures, receiverServer, startServer, text, vector } from './helpers.ts'

afterEach(closeServers)

const SECRET = 'whsec-demo-7c2e91'
const APP_SECRET = 'app-secret-9f1d'
const customerCreated = vector('customer-created')

let dir: string
let payloadFile: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hookguard-cli-'))
  payloadFile = join(dir, 'payload.json')
  await writeFile(payloadFile, customerCreated.body)
})
afterAll(() => rm(dir, { recursive: true, force: true }))

describe('hookguard', () => {
  it('prints the commands for --help and exits 0', async () => {
    const { io, stdout } = captureIo()
    expect(await run(['--help'], io)).toBe(0)
    for (const command of ['sign [file]', 'send <url>', 'listen', 'token <token_url>']) expect(stdout()).toContain(command)
  })

  it('prints the help to stderr and exits 2 without a command', async () => {
    const { io, stdout, stderr } = captureIo()
    expect(await run([], io)).toBe(2)
    expect(stdout()).toBe('')
    expect(stderr()).toMatch(/^Usage: hookguard <command>/)
  })

  it('exits 2 for an unknown command without echoing it when it is no near miss of a command: it may be a secret', async () => {
    const { io, stderr } = captureIo()
    expect(await run(['s3cret-typed-first'], io)).toBe(2)
    expect(stderr()).toContain('unknown command (not shown: it may be a secret); expected one of sign, send, listen, token')
    expect(stderr()).not.toContain('s3cret-typed-first')
  })

  it.each([
    ['sned', 'send'],
    ['snd', 'send'],
    ['sing', 'sign'],
    ['Listen', 'listen'],
    ['tokens', 'token'],
  ])('names a mistyped command (%s) and the one meant (%s), and exits 2', async (typed, meant) => {
    const { io, stderr } = captureIo()
    expect(await run([typed], io)).toBe(2)
    expect(stderr()).toBe(
      `hookguard: unknown command "${typed}"; did you mean "${meant}"? (expected one of sign, send, listen, token, inspect)\nRun 'hookguard --help' for usage.\n`,
    )
  })

  it("says in full in the help where a command's help is, and that sign and send sign with the first of a list", async () => {
    const top = captureIo()
    await run(['--help'], top.io)
    expect(top.stdout()).toContain("  -h, --help          Show this help; 'hookguard <command> --help' shows a command's own\n")
    for (const command of ['sign', 'send']) {
      const { io, stdout } = captureIo()
      await run([command, '--help'], io)
      const help = stdout().replace(/\s+/g, ' ')
      expect(help, command).toContain('several, comma-separated, while rotating: signs with the first')
      expect(help, command).toContain('a secret holding a comma cannot be given as a list')
    }
  })

  // A secret glued to its flag by a typo (`:`), an autocorrected dash or nothing at all.
  it.each(
    [
      'sign',
      'send http://127.0.0.1:9/ --mode secret',
      'listen --mode secret --port 0',
      'inspect --port 0 --ui-port 0',
      'token http://127.0.0.1:9/',
    ]
      .map((command) => command.split(' '))
      .flatMap((command) =>
        ['--secret:', '--secret\u2014', '--secret', '--app-secret:', '--password:'].map((flag) => [command[0], flag, command] as const),
      ),
  )('%s names the option of %s…, never the value glued to it, and exits 2', async (_name, flag, command) => {
    const { io, stdout, stderr } = captureIo()
    io.fetch = () => expect.unreachable('nothing is sent')
    expect(await run([...command, `${flag}whsec-live-9f8e7d6c5b4a`], io)).toBe(2)
    expect(stdout()).toBe('')
    expect(stderr().split('\n')[0]).toBe(
      `hookguard: Unknown option '${flag.replace(/[:\u2014]$/, '')}' followed by more (not shown: it may be a secret)`,
    )
    expect(stderr()).not.toContain('9f8e7d6c5b4a')
  })

  it('prints the version for --version', async () => {
    const { io, stdout } = captureIo()
    expect(await run(['--version'], io)).toBe(0)
    expect(stdout()).toBe(`${packageJson.version}\n`)
  })

  it.each(['sign', 'send', 'listen', 'token'])('prints the help of %s for --help, -h and help <command>, and exits 0', async (command) => {
    for (const argv of [
      [command, '--help'],
      [command, '-h'],
      ['help', command],
      [command, '--mode', 'bogus', '--help'],
    ]) {
      const { io, stdout } = captureIo()
      expect(await run(argv, io), argv.join(' ')).toBe(0)
      expect(stdout()).toMatch(new RegExp(`^Usage: hookguard ${command}`))
    }
  })
})

describe('hookguard sign', () => {
  it("prints only the service's signature of a file, with the secret from --secret", async () => {
    const { io, stdout, stderr } = captureIo()
    expect(await run(['sign', payloadFile, '--secret', SECRET], io)).toBe(0)
    expect(stdout()).toBe(`${customerCreated.signature}\n`)
    expect(stderr()).toBe('')
  })

  it('takes the secret from HOOKGUARD_SECRET', async () => {
    const { io, stdout } = captureIo({ env: { HOOKGUARD_SECRET: SECRET } })
    expect(await run(['sign', payloadFile], io)).toBe(0)
    expect(stdout()).toBe(`${customerCreated.signature}\n`)
  })

  it('signs with the first of a comma-separated list, the one listen and inspect try first', async () => {
    const { io, stdout } = captureIo({ env: { HOOKGUARD_SECRET: `${SECRET},whsec-old` } })
    expect(await run(['sign', payloadFile], io)).toBe(0)
    expect(stdout()).toBe(`${customerCreated.signature}\n`)
    const flag = captureIo()
    expect(await run(['sign', payloadFile, '--secret', `${SECRET},whsec-old`], flag.io)).toBe(0)
    expect(flag.stdout()).toBe(`${customerCreated.signature}\n`)
  })

  it('signs with the first of a list typed with spaces, without them', async () => {
    const { io, stdout } = captureIo({ env: { HOOKGUARD_SECRET: ` ${SECRET}\t, whsec-old-1234` } })
    expect(await run(['sign', payloadFile], io)).toBe(0)
    expect(stdout()).toBe(`${customerCreated.signature}\n`)
  })

  it('refuses a list with an entry shorter than 8 characters, a secret holding a comma, and exits 2 without it', async () => {
    const ways: { env: Record<string, string>; args: string[] }[] = [
      { env: { HOOKGUARD_SECRET: `${SECRET},x` }, args: [] },
      { env: {}, args: ['--secret', `${SECRET},x`] },
    ]
    for (const given of ways) {
      const { io, stdout, stderr } = captureIo({ env: given.env })
      expect(await run(['sign', payloadFile, ...given.args], io)).toBe(2)
      expect(stdout()).toBe('')
      expect(stderr()).toContain('a list entry is shorter than 8 characters; a secret holding a comma cannot be given as a list')
      expect(stderr()).not.toContain(SECRET)
    }
  })

  it('prefers --secret over HOOKGUARD_SECRET', async () => {
    const { io, stdout } = captureIo({ env: { HOOKGUARD_SECRET: 'whsec-other' } })
    expect(await run(['sign', payloadFile, `--secret=${SECRET}`], io)).toBe(0)
    expect(stdout()).toBe(`${customerCreated.signature}\n`)
  })

  it('reads the body from standard input when no file is given, or for -', async () => {
    const pretty = vector('nested-groups/pretty-body')
    for (const argv of [['sign'], ['sign', '-']]) {
      const { io, stdout } = captureIo({ env: { HOOKGUARD_SECRET: SECRET }, stdin: pretty.body })
      expect(await run(argv, io)).toBe(0)
      expect(stdout()).toBe(`${pretty.signature}\n`)
    }
  })

  it('signs the bytes as they are, a no-break space included', async () => {
    const v = vector('nbsp-in-address')
    const { io, stdout } = captureIo({ env: { HOOKGUARD_SECRET: v.secret }, stdin: new Uint8Array(Buffer.from(v.bodyBase64, 'base64')) })
    expect(await run(['sign'], io)).toBe(0)
    expect(stdout()).toBe(`${v.signature}\n`)
  })

  it('exits 2 naming both sources when there is no secret', async () => {
    const { io, stdout, stderr } = captureIo()
    expect(await run(['sign', payloadFile], io)).toBe(2)
    expect(stdout()).toBe('')
    expect(stderr()).toContain('--secret or the HOOKGUARD_SECRET environment variable is required')
    expect(stderr()).toContain("Run 'hookguard sign --help' for usage.")
  })

  it('exits 2 when there is no file and standard input is a terminal or absent', async () => {
    const { io, stderr } = captureIo({ env: { HOOKGUARD_SECRET: SECRET } })
    expect(await run(['sign'], io)).toBe(2)
    expect(stderr()).toContain('no body')
    const tty = captureIo({ env: { HOOKGUARD_SECRET: SECRET }, stdin: '{}' })
    Object.assign(tty.io.stdin as object, { isTTY: true })
    expect(await run(['sign'], tty.io)).toBe(2)
  })

  it('exits 1 for a file that cannot be read, and never prints the secret', async () => {
    const { io, stdout, stderr } = captureIo()
    expect(await run(['sign', join(dir, 'missing.json'), '--secret', SECRET], io)).toBe(1)
    expect(stdout()).toBe('')
    expect(stderr()).toContain('ENOENT')
    expect(stderr()).not.toContain(SECRET)
  })

  it('exits 2 for more than one file or an unknown option, without echoing values', async () => {
    const two = captureIo({ env: { HOOKGUARD_SECRET: SECRET } })
    expect(await run(['sign', payloadFile, 'hunter2'], two.io)).toBe(2)
    expect(two.stderr()).not.toContain('hunter2')
    const unknown = captureIo()
    expect(await run(['sign', '--secrte=hunter2', payloadFile], unknown.io)).toBe(2)
    expect(unknown.stderr()).toContain("Unknown option '--secrte'")
    expect(unknown.stderr()).not.toContain('hunter2')
  })
})

describe('hookguard send', () => {
  it('delivers a sample event signed like the service, prints the status and body, and exits 0', async () => {
    const server = await startServer(() => ({ status: 200, body: '{"received":true}' }))
    const { io, stdout, stderr } = captureIo({ env: { HOOKGUARD_SECRET: SECRET } })
    expect(await run(['send', `${server.url}/hooks`, '--mode', 'secret', '--event', 'order.paid'], io)).toBe(0)
    expect(stdout()).toBe('200 OK\n{"received":true}\n')
    expect(stderr()).toBe('')
    const [request] = server.requests
    expect(text(request?.body ?? new Uint8Array())).toBe(vector('order-paid').body)
    expect(request?.headers['x-service-hmac-signature']).toBe(vector('order-paid').signature)
  })

  it('sends customer.created when neither --file nor --event is given', async () => {
    const server = await startServer()
    const { io } = captureIo()
    expect(await run(['send', server.url, '--mode', 'none'], io)).toBe(0)
    expect(text(server.requests[0]?.body ?? new Uint8Array())).toBe(serialize(sampleEvent('customer.created')))
  })

  it('sends a --file byte for byte and signs it as it is', async () => {
    const pretty = vector('order-paid/pretty-body')
    const file = join(dir, 'pretty.json')
    await writeFile(file, pretty.body)
    const server = await startServer()
    const { io } = captureIo()
    expect(await run(['send', server.url, '--mode', 'secret', '--secret', SECRET, '--file', file], io)).toBe(0)
    expect(text(server.requests[0]?.body ?? new Uint8Array())).toBe(pretty.body)
    expect(server.requests[0]?.headers['x-service-hmac-signature']).toBe(pretty.signature)
  })

  it('reads --file - from standard input', async () => {
    const server = await startServer()
    const { io } = captureIo({ stdin: '{"event":"ping"}' })
    expect(await run(['send', server.url, '--mode', 'none', '--file', '-'], io)).toBe(0)
    expect(text(server.requests[0]?.body ?? new Uint8Array())).toBe('{"event":"ping"}')
  })

  it('uses --signature-header', async () => {
    const server = await startServer()
    const { io } = captureIo({ env: { HOOKGUARD_SECRET: SECRET } })
    expect(await run(['send', server.url, '--mode', 'secret', '--signature-header', 'X-Sig'], io)).toBe(0)
    expect(server.requests[0]?.headers['x-sig']).toBe(customerCreated.signature)
  })

  it('sends Basic credentials, the password from HOOKGUARD_PASSWORD', async () => {
    const { username, password, header } = fixtures.basic.cases[1] as (typeof fixtures.basic.cases)[number]
    const server = await startServer()
    const { io } = captureIo({ env: { HOOKGUARD_PASSWORD: password } })
    expect(await run(['send', server.url, '--mode', 'basic', '--username', username], io)).toBe(0)
    expect(server.requests[0]?.headers.authorization).toBe(header)
  })

  it('takes the user name from HOOKGUARD_USERNAME and the app id from HOOKGUARD_APPID, as listen and inspect do', async () => {
    const { username, password, header } = fixtures.basic.cases[1] as (typeof fixtures.basic.cases)[number]
    const server = await startServer()
    const basic = captureIo({ env: { HOOKGUARD_USERNAME: username, HOOKGUARD_PASSWORD: password } })
    expect(await run(['send', server.url, '--mode', 'basic'], basic.io)).toBe(0)
    expect(server.requests[0]?.headers.authorization).toBe(header)

    const receiver = await receiverServer({ auth: { mode: 'oauth2', appId: 'app-1', secret: APP_SECRET } })
    const oauth = captureIo({ env: { HOOKGUARD_APPID: 'app-1', HOOKGUARD_APP_SECRET: APP_SECRET } })
    expect(await run(['send', `${receiver.url}/hooks`, '--mode', 'oauth2', '--token-url', `${receiver.url}/token`], oauth.io)).toBe(0)
    const token = captureIo({ env: { HOOKGUARD_APPID: 'app-1', HOOKGUARD_APP_SECRET: APP_SECRET } })
    expect(await run(['token', `${receiver.url}/token`], token.io)).toBe(0)
    expect(receiver.requests.map((r) => `${r.method} ${new URL(r.url, receiver.url).pathname}`)).toEqual([
      'GET /token',
      'POST /hooks',
      'GET /token',
    ])
  })

  it('fetches a token and delivers with it in mode oauth2, verified by a receiver', async () => {
    const receiver = await receiverServer({ auth: { mode: 'oauth2', appId: 'app-1', secret: APP_SECRET } })
    const { io, stdout } = captureIo({ env: { HOOKGUARD_APP_SECRET: APP_SECRET } })
    const code = await run(
      ['send', `${receiver.url}/hooks`, '--mode', 'oauth2', '--token-url', `${receiver.url}/token`, '--appid', 'app-1'],
      io,
    )
    expect(code).toBe(0)
    expect(stdout()).toMatch(/^200 OK\n/)
    expect(receiver.requests.map((r) => r.method)).toEqual(['GET', 'POST'])
  })

  it("prints the receiver's refusal, with headers for --include, and exits 1", async () => {
    const receiver = await receiverServer({ auth: { mode: 'secret', secret: SECRET } })
    const { io, stdout } = captureIo()
    expect(await run(['send', receiver.url, '--mode', 'secret', '--secret', 'whsec-wrong', '-i'], io)).toBe(1)
    const [status, ...rest] = stdout().split('\n')
    expect(status).toBe('401 Unauthorized')
    expect(rest).toContain('cache-control: no-store')
    expect(JSON.parse(rest.at(-2) ?? '')).toMatchObject({ error: 'invalid_signature' })
    expect(stdout()).not.toContain('whsec-wrong')
  })

  it('shows an answer that is not JSON by its status, content type and first lines, and how much more it held', async () => {
    // A framework's error page: 30 KB of HTML, as a Worker without its secret answers.
    const lines = Array.from({ length: 600 }, (_, i) => `<p>line ${i} of the error page, with an \u001b[2J escape</p>`)
    const page = `<!DOCTYPE html>\n<title>Error 1101</title>\n${lines.join('\n')}\n`
    const server = await startServer(() => ({ status: 500, headers: { 'content-type': 'text/html; charset=utf-8' }, body: page }))
    const { io, stdout } = captureIo()
    expect(await run(['send', server.url, '--mode', 'none'], io)).toBe(1)
    const out = stdout().split('\n')
    expect(out.slice(0, 4)).toEqual([
      '500 Internal Server Error',
      'content-type: text/html; charset=utf-8',
      '<!DOCTYPE html>',
      '<title>Error 1101</title>',
    ])
    const shown = page.split('\n').slice(0, 10).join('\n')
    expect(out.slice(2, 12).join('\n')).toBe(shown.replaceAll('\u001b', '\uFFFD'))
    expect(out[12]).toBe(`… ${Buffer.byteLength(page) - Buffer.byteLength(`${shown}\n`)} more bytes`)
    expect(out).toHaveLength(14)
    expect(stdout()).not.toContain('\u001b')
  })

  it('cuts a long answer of few lines at 2 KB, never inside a character', async () => {
    const body = 'é'.repeat(5000)
    const server = await startServer(() => ({ status: 502, headers: { 'content-type': 'text/plain' }, body }))
    const { io, stdout } = captureIo()
    expect(await run(['send', server.url, '--mode', 'none'], io)).toBe(1)
    expect(stdout()).toBe(`502 Bad Gateway\ncontent-type: text/plain\n${'é'.repeat(1024)}\n… ${10000 - 2048} more bytes\n`)
  })

  it('prints a JSON answer whole up to 64 KiB; one that does not parse, or is larger, is previewed like any other', async () => {
    const cases = [
      // Labelled JSON, but an escape sequence and no JSON: the label is the answer's own claim.
      { body: '\u001b]0;pwned\u0007\u001b[2Jnot json', expected: '\uFFFD]0;pwned\uFFFD\uFFFD[2Jnot json\n' },
      { body: JSON.stringify({ pad: 'a'.repeat(200_000) }), expected: undefined },
    ]
    for (const { body, expected } of cases) {
      const server = await startServer(() => ({ status: 500, headers: { 'content-type': 'application/json' }, body }))
      const { io, stdout } = captureIo()
      expect(await run(['send', server.url, '--mode', 'none'], io)).toBe(1)
      const [status, type, ...rest] = stdout().split('\n')
      expect(status).toBe('500 Internal Server Error')
      expect(type).toBe('content-type: application/json')
      if (expected !== undefined) expect(rest.join('\n')).toBe(expected)
      expect(Buffer.byteLength(stdout())).toBeLessThan(2048 + 200)
      expect(stdout()).not.toContain('\u0007')
      expect(stdout()).not.toContain('\u001b')
    }
  })

  it('replaces what could rewrite the terminal line in a preview (a lone CR, a bidi override), and keeps CRLF line ends', async () => {
    const body = 'ok\r\nfake line\rover\u202Eevil\n'
    const server = await startServer(() => ({ status: 502, headers: { 'content-type': 'text/html' }, body }))
    const { io, stdout } = captureIo()
    expect(await run(['send', server.url, '--mode', 'none'], io)).toBe(1)
    expect(stdout()).toBe('502 Bad Gateway\ncontent-type: text/html\nok\r\nfake line\uFFFDover\uFFFDevil\n')
  })

  it('prints a JSON answer whole, however many lines', async () => {
    const body = JSON.stringify({ error: 'invalid_payload', paths: Array.from({ length: 400 }, (_, i) => `items.${i}`) }, null, 2)
    const server = await startServer(() => ({ status: 422, headers: { 'content-type': 'application/json' }, body }))
    const { io, stdout } = captureIo()
    expect(await run(['send', server.url, '--mode', 'none'], io)).toBe(1)
    expect(stdout()).toBe(`422 Unprocessable Entity\n${body}\n`)
  })

  it('exits 1 naming the address when the receiver cannot be reached', async () => {
    const url = await refusedOrigin()
    const { io, stdout, stderr } = captureIo()
    expect(await run(['send', `${url}/hooks`, '--mode', 'none'], io)).toBe(1)
    expect(stdout()).toBe('')
    expect(stderr()).toBe(`hookguard: could not reach ${url}/hooks (ECONNREFUSED)\n`)
  })

  it('exits 1 without the app secret when the token address refuses', async () => {
    const receiver = await receiverServer({ auth: { mode: 'oauth2', appId: 'app-1', secret: APP_SECRET } })
    const { io, stderr } = captureIo()
    const argv = [
      'send',
      receiver.url,
      '--mode',
      'oauth2',
      '--token-url',
      `${receiver.url}/token`,
      '--appid',
      'app-1',
      '--app-secret',
      'wrong-app-secret',
    ]
    expect(await run(argv, io)).toBe(1)
    expect(stderr()).toBe(`hookguard: the token address ${receiver.url}/token answered 401 (invalid_client)\n`)
  })

  it('colours the status on a terminal, and not when NO_COLOR is set', async () => {
    const server = await startServer()
    const tty = captureIo({ tty: true })
    await run(['send', server.url, '--mode', 'none'], tty.io)
    expect(tty.stdout()).toContain('\u001b[32m204 No Content')
    const noColor = captureIo({ tty: true, env: { NO_COLOR: '1' } })
    await run(['send', server.url, '--mode', 'none'], noColor.io)
    expect(noColor.stdout()).toBe('204 No Content\n')
  })

  describe('usage errors, exit code 2, nothing sent', () => {
    const cases: [string, string[], string][] = [
      ['no URL', ['send', '--mode', 'none'], '<url> is required'],
      ['a URL that is not http(s)', ['send', 'ftp://x/y', '--mode', 'none'], '<url> must be an http:// or https:// URL'],
      ['no --mode', ['send', 'http://127.0.0.1:9/'], '--mode is required'],
      ['an unknown --mode', ['send', 'http://127.0.0.1:9/', '--mode', 'hmac'], '--mode must be one of secret, basic, oauth2, none'],
      [
        'no secret',
        ['send', 'http://127.0.0.1:9/', '--mode', 'secret'],
        '--secret or the HOOKGUARD_SECRET environment variable is required',
      ],
      [
        'no username',
        ['send', 'http://127.0.0.1:9/', '--mode', 'basic', '--password', 'p'],
        '--username or the HOOKGUARD_USERNAME environment variable is required',
      ],
      [
        'a username with a colon',
        ['send', 'http://127.0.0.1:9/', '--mode', 'basic', '--username', 'a:b', '--password', 'p'],
        'username cannot contain a colon',
      ],
      [
        'no --token-url',
        ['send', 'http://127.0.0.1:9/', '--mode', 'oauth2', '--appid', 'a', '--app-secret', 's'],
        '--token-url is required',
      ],
      ['both --file and --event', ['send', 'http://127.0.0.1:9/', '--mode', 'none', '--file', 'x', '--event', 'order.paid'], 'not both'],
      ['an unknown --event', ['send', 'http://127.0.0.1:9/', '--mode', 'none', '--event', 'order.refunded'], '--event must be one of'],
      ['an option without its value', ['send', 'http://127.0.0.1:9/', '--mode'], "Option '--mode <value>' argument missing"],
      [
        'a list of secrets with a short entry',
        ['send', 'http://127.0.0.1:9/', '--mode', 'secret', '--secret', 'whsec-long-enough,x'],
        'hookguard: --secret or HOOKGUARD_SECRET: a list entry is shorter than 8 characters',
      ],
      [
        'a signature header no request can carry',
        ['send', 'http://127.0.0.1:9/', '--mode', 'secret', '--secret', 's', '--signature-header', 'a b'],
        'hookguard: --signature-header must be an HTTP header name',
      ],
      [
        'an empty signature header',
        ['send', 'http://127.0.0.1:9/', '--mode', 'secret', '--secret', 's', '--signature-header', ''],
        'hookguard: --signature-header must be an HTTP header name',
      ],
    ]
    it.each(cases)('for %s', async (_what, argv, message) => {
      let requests = 0
      const { io, stdout, stderr } = captureIo()
      io.fetch = async () => {
        requests++
        return new Response(null, { status: 204 })
      }
      expect(await run(argv, io)).toBe(2)
      expect(stderr()).toContain(message)
      expect(stderr()).toContain("Run 'hookguard send --help' for usage.")
      expect(stdout()).toBe('')
      expect(requests).toBe(0)
    })
  })
})

describe('hookguard token', () => {
  const auth = { mode: 'oauth2', appId: 'app-1', secret: APP_SECRET } as const

  it('fetches a token the way the service does and prints the JSON answer', async () => {
    const receiver = await receiverServer({ auth })
    const { io, stdout } = captureIo()
    expect(await run(['token', `${receiver.url}/token`, '--appid', 'app-1', '--app-secret', APP_SECRET], io)).toBe(0)
    const answer = JSON.parse(stdout())
    expect(answer).toMatchObject({ expires_in: 7200, token_type: 'Bearer' })
    expect(answer.access_token).toEqual(expect.any(String))
    const query = new URL(receiver.requests[0]?.url ?? '', receiver.url).searchParams
    expect(Object.fromEntries(query)).toEqual({ appid: 'app-1', secret: APP_SECRET, grant_type: 'client_credentials' })
  })

  it('prints a token that a receiver accepts', async () => {
    const receiver = await receiverServer({ auth })
    const { io, stdout } = captureIo({ env: { HOOKGUARD_APP_SECRET: APP_SECRET } })
    expect(await run(['token', `${receiver.url}/token`, '--appid', 'app-1'], io)).toBe(0)
    const { access_token } = JSON.parse(stdout())
    const answer = await deliver({ url: `${receiver.url}/hooks?access_token=${access_token}`, mode: 'none', payload: '{}' })
    expect(answer.status).toBe(200)
  })

  it('exits 1 with the status and error code, and never the secret, when refused', async () => {
    const receiver = await receiverServer({ auth })
    const { io, stdout, stderr } = captureIo()
    expect(await run(['token', `${receiver.url}/token`, '--appid', 'app-1', '--app-secret', 'wrong-app-secret'], io)).toBe(1)
    expect(stdout()).toBe('')
    expect(stderr()).toBe(`hookguard: the token address ${receiver.url}/token answered 401 (invalid_client)\n`)
  })

  it('exits 2 without --appid, or without a secret', async () => {
    const noId = captureIo()
    expect(await run(['token', 'http://127.0.0.1:9/token', '--app-secret', 's'], noId.io)).toBe(2)
    expect(noId.stderr()).toContain('--appid or the HOOKGUARD_APPID environment variable is required')
    const noSecret = captureIo()
    expect(await run(['token', 'http://127.0.0.1:9/token', '--appid', 'a'], noSecret.io)).toBe(2)
    expect(noSecret.stderr()).toContain('--app-secret or the HOOKGUARD_APP_SECRET environment variable is required')
  })

  it('refuses --secret, the signing secret in every other command, and points to --app-secret, sending nothing', async () => {
    const receiver = await receiverServer({ auth })
    const { io, stderr } = captureIo()
    expect(await run(['token', `${receiver.url}/token`, '--appid', 'app-1', '--secret', APP_SECRET], io)).toBe(2)
    expect(stderr()).toContain('--secret is the signing secret (mode secret); the token address takes the app secret: --app-secret')
    expect(stderr()).not.toContain(APP_SECRET)
    expect(receiver.requests).toHaveLength(0)
  })
})

describe('hookguard listen', () => {
  /** Starts `listen` on a free port; resolves its base URL, its output and a stop function. */
  async function listen(args: string[], env: Record<string, string> = {}) {
    const controller = new AbortController()
    const captured = captureIo({ env, signal: controller.signal })
    const exit = run(['listen', '--port', '0', ...args], captured.io)
    const [, url] = await Promise.race([
      captured.waitForStdout(/Listening on (http:\/\/127\.0\.0\.1:\d+)\//),
      exit.then((code) => expect.unreachable(`listen exited ${code}: ${captured.stderr()}`)),
    ])
    const lines = () => captured.stdout().split('\n').slice(1, -1)
    const stop = async () => {
      controller.abort()
      return exit
    }
    return { url: url as string, lines, stop, ...captured }
  }

  it('prints verified with the event for a valid delivery, rejected with the code for a tampered one, and exits 0 when stopped', async () => {
    const listener = await listen(['--mode', 'secret', '--secret', SECRET])
    const valid = await deliver({ url: `${listener.url}/hooks`, mode: 'secret', secret: SECRET, payload: sampleEvent('order.paid') })
    expect(valid.status).toBe(200)
    const tampered = await fetch(`${listener.url}/hooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', 'x-service-hmac-signature': customerCreated.signature },
      body: vector('customer-created/tampered').body,
    })
    expect(tampered.status).toBe(401)
    expect(listener.lines()).toEqual(['verified  POST /hooks  order.paid', 'rejected  POST /hooks  invalid_signature (401)'])

    expect(await listener.stop()).toBe(0)
    expect(listener.stdout()).toMatch(/Stopped\.\n$/)
    await expect(fetch(listener.url)).rejects.toThrow()
  })

  it('prints missing_signature for a delivery without a signature, and a verified one without an event as such', async () => {
    const listener = await listen(['--mode', 'secret'], { HOOKGUARD_SECRET: SECRET })
    await deliver({ url: listener.url, mode: 'none', payload: sampleEvent() })
    await deliver({ url: `${listener.url}/x`, mode: 'secret', secret: SECRET, payload: [1, 2] })
    expect(listener.lines()).toEqual(['rejected  POST /  missing_signature (401)', 'verified  POST /x'])
    expect(await listener.stop()).toBe(0)
  })

  it('serves the token address at /token in mode oauth2 and prints each token request', async () => {
    const listener = await listen(['--mode', 'oauth2', '--appid', 'app-1'], { HOOKGUARD_APP_SECRET: APP_SECRET })
    expect(listener.stdout()).toContain(`Token address: ${listener.url}/token\n`)
    const options = {
      url: `${listener.url}/hooks`,
      mode: 'oauth2',
      tokenUrl: `${listener.url}/token`,
      appId: 'app-1',
      payload: sampleEvent(),
    } as const
    expect((await deliver({ ...options, appSecret: APP_SECRET })).status).toBe(200)
    await expect(deliver({ ...options, appSecret: 'wrong-app-secret' })).rejects.toMatchObject({ code: 'token_request_failed' })
    expect(listener.lines().slice(1)).toEqual([
      'token     GET /token  issued (200)',
      'verified  POST /hooks  customer.created',
      'token     GET /token  invalid_client (401)',
    ])
    expect(listener.stdout()).not.toContain(APP_SECRET)
    expect(await listener.stop()).toBe(0)
  })

  it('prints invalid_credentials for a wrong Basic password', async () => {
    const listener = await listen(['--mode', 'basic', '--username', 'hook-user'], { HOOKGUARD_PASSWORD: 'right' })
    await deliver({ url: listener.url, mode: 'basic', username: 'hook-user', password: 'wrong', payload: '{}' })
    await deliver({ url: listener.url, mode: 'basic', username: 'hook-user', password: 'right', payload: '{}' })
    expect(listener.lines()).toEqual(['rejected  POST /  invalid_credentials (401)', 'verified  POST /'])
    expect(await listener.stop()).toBe(0)
  })

  it('verifies with every secret of a comma-separated HOOKGUARD_SECRET, as a receiver does while rotating', async () => {
    const listener = await listen(['--mode', 'secret'], { HOOKGUARD_SECRET: `whsec-new-4b1f,${SECRET}` })
    for (const secret of ['whsec-new-4b1f', SECRET, 'whsec-other']) {
      await deliver({ url: listener.url, mode: 'secret', secret, payload: sampleEvent('order.paid') })
    }
    expect(listener.lines()).toEqual([
      'verified  POST /  order.paid',
      'verified  POST /  order.paid',
      'rejected  POST /  invalid_signature (401)',
    ])
    expect(await listener.stop()).toBe(0)
  })

  it('reads the user name from HOOKGUARD_USERNAME and the app id from HOOKGUARD_APPID, as inspect does', async () => {
    const basic = await listen(['--mode', 'basic'], { HOOKGUARD_USERNAME: 'hook-user', HOOKGUARD_PASSWORD: 'right' })
    await deliver({ url: basic.url, mode: 'basic', username: 'hook-user', password: 'right', payload: '{}' })
    expect(basic.lines()).toEqual(['verified  POST /'])
    expect(await basic.stop()).toBe(0)

    const oauth = await listen(['--mode', 'oauth2'], { HOOKGUARD_APPID: 'app-1', HOOKGUARD_APP_SECRET: APP_SECRET })
    const tokenUrl = `${oauth.url}/token`
    await deliver({ url: oauth.url, mode: 'oauth2', tokenUrl, appId: 'app-1', appSecret: APP_SECRET, payload: '{}' })
    expect(oauth.lines().slice(1)).toEqual(['token     GET /token  issued (200)', 'verified  POST /'])
    expect(await oauth.stop()).toBe(0)
  })

  it('serves the token address at --token-path', async () => {
    const listener = await listen(['--mode', 'oauth2', '--appid', 'app-1', '--token-path', '/oauth/token'], {
      HOOKGUARD_APP_SECRET: APP_SECRET,
    })
    expect(listener.stdout()).toContain(`Token address: ${listener.url}/oauth/token\n`)
    const tokenUrl = `${listener.url}/oauth/token`
    await deliver({ url: `${listener.url}/hooks`, mode: 'oauth2', tokenUrl, appId: 'app-1', appSecret: APP_SECRET, payload: '{}' })
    expect(listener.lines().slice(1)).toEqual(['token     GET /oauth/token  issued (200)', 'verified  POST /hooks'])
    expect(await listener.stop()).toBe(0)
  })

  it('serves the token at exactly --token-path, whose characters mean nothing more, and at its longest', async () => {
    for (const path of ['/t*', '/:id', `/${'t'.repeat(255)}`]) {
      const listener = await listen(['--mode', 'oauth2', '--appid', 'app-1', '--token-path', path], { HOOKGUARD_APP_SECRET: APP_SECRET })
      const query = `?appid=app-1&secret=${APP_SECRET}&grant_type=client_credentials`
      const token = await fetch(`${listener.url}${path}${query}`)
      expect(token.status, path).toBe(200)
      expect(await token.json(), path).toMatchObject({ access_token: expect.any(String) })
      expect((await fetch(`${listener.url}/tx${query}`)).status, path).toBe(404)
      expect(await listener.stop()).toBe(0)
    }
  })

  it('replaces control characters in an event name, so a payload cannot drive the terminal', async () => {
    const listener = await listen(['--mode', 'none'])
    await deliver({ url: listener.url, mode: 'none', payload: { event: 'evil\u001b[2Jname' } })
    expect(listener.lines()).toEqual(['verified  POST /  evil\uFFFD[2Jname'])
    expect(await listener.stop()).toBe(0)
  })

  it('replaces the marks that reorder a line on screen, in the path and the event name alike', async () => {
    const listener = await listen(['--mode', 'none'])
    // The right-to-left override, an isolate and the Arabic letter mark: the line would read reordered.
    await deliver({ url: `${listener.url}/%E2%80%AEkcah`, mode: 'none', payload: { event: 'a\u2066b\u061cc\u2028d' } })
    expect(listener.lines()).toEqual(['verified  POST /\uFFFDkcah  a\uFFFDb\uFFFDc\uFFFDd'])
    expect(await listener.stop()).toBe(0)
  })

  it('exits 1 when the port is taken', async () => {
    const taken = await startServer()
    const { io, stderr } = captureIo()
    expect(await run(['listen', '--mode', 'none', '--port', new URL(taken.url).port], io)).toBe(1)
    expect(stderr()).toMatch(/cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/)
  })

  describe('bounds what it takes in at once', () => {
    const MiB = 1024 * 1024
    const connections: Connection[] = []
    afterEach(() => {
      for (const connection of connections.splice(0)) connection.destroy()
    })
    /** A request whose head and first byte are sent, the rest of its declared body never. */
    async function stalledUpload(url: string, length: number): Promise<Connection> {
      const connection = await connect(Number(new URL(url).port))
      connections.push(connection)
      await connection.write(head('POST', '/hooks', [['Content-Length', String(length)]]), ' ')
      return connection
    }
    /** A delivery written whole before anything is read, as the service's sender does. */
    async function writeFirst(url: string): Promise<Reply | undefined> {
      const connection = await connect(Number(new URL(url).port), '127.0.0.1', { writeFirst: true })
      connections.push(connection)
      const body = '{"event":"order.paid"}'
      await connection.write(head('POST', '/hooks', [['Content-Length', String(body.length)]]), body)
      return connection.reply(5_000)
    }

    it('past the bytes of bodies in flight, a delivery gets 503 receiver_busy with Connection: close, and the room comes back', async () => {
      const listener = await listen(['--mode', 'none', '--max-in-flight-bytes', String(2 * MiB)])
      const held = [await stalledUpload(listener.url, MiB), await stalledUpload(listener.url, MiB)]
      await new Promise((resolve) => setTimeout(resolve, 100))
      const refused = await writeFirst(listener.url)
      expect(refused?.status).toBe(503)
      expect(refused?.headers.connection).toBe('close')
      expect(refused?.headers['retry-after']).toBe('1')
      expect(JSON.parse(refused?.text ?? '')).toEqual({ error: 'receiver_busy', message: expect.stringContaining('hookguard listen') })
      expect(listener.stderr()).toBe(
        'hookguard listen: 1 request answered 503 receiver_busy (over the connection cap or the bytes of bodies in flight).\n',
      )
      for (const connection of held) connection.destroy()
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect((await writeFirst(listener.url))?.status).toBe(200)
      // After the two uploads broken off (each a line of its own).
      expect(listener.lines().at(-1)).toBe('verified  POST /hooks  order.paid')
      expect(await listener.stop()).toBe(0)
    })

    it('past the connections served at once, likewise', async () => {
      const listener = await listen(['--mode', 'none', '--max-connections', '1'])
      const held = await stalledUpload(listener.url, 100)
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect((await writeFirst(listener.url))?.status).toBe(503)
      held.destroy()
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect((await writeFirst(listener.url))?.status).toBe(200)
      expect(await listener.stop()).toBe(0)
    })

    it('gives back the room of a body that stops arriving, after the time allowed, and says so', async () => {
      const controller = new AbortController()
      const captured = captureIo({ signal: controller.signal })
      const exit = listenCommand(['--mode', 'none', '--port', '0', '--max-connections', '1'], captured.io, { bodyTimeoutMs: 300 })
      const [, url = ''] = await captured.waitForStdout(/Listening on (http:\/\/127\.0\.0\.1:\d+)\//)
      const stalled = await stalledUpload(url, 100)
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect((await writeFirst(url))?.status).toBe(503)
      expect(await stalled.closed(2_000)).toBe(true)
      expect((await writeFirst(url))?.status).toBe(200)
      const lines = captured.stdout().split('\n').slice(1, -1)
      expect(lines).toEqual([
        'timeout   POST /hooks  the body did not arrive within 0.3 s; connection closed',
        'verified  POST /hooks  order.paid',
      ])
      controller.abort()
      expect(await exit).toBe(0)
    })

    it('says a sender closed before its body ended, not the refusal nobody read; and nothing after Stopped', async () => {
      const listener = await listen(['--mode', 'none'])
      const gone = await stalledUpload(listener.url, 100)
      gone.destroy()
      await stalledUpload(listener.url, 100)
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(await listener.stop()).toBe(0)
      expect(listener.stdout().split('\n').slice(1)).toEqual([
        'aborted   POST /hooks  the sender closed before its body ended; no answer',
        'Stopped.',
        '',
      ])
    })

    it('counts every refusal on standard error: those after the first line when its interval ends, or at the stop', async () => {
      const listener = await listen(['--mode', 'none', '--max-connections', '1'])
      await stalledUpload(listener.url, 100)
      await new Promise((resolve) => setTimeout(resolve, 100))
      for (let i = 0; i < 3; i++) expect((await writeFirst(listener.url))?.status).toBe(503)
      expect(await listener.stop()).toBe(0)
      expect(listener.stderr()).toBe(
        'hookguard listen: 1 request answered 503 receiver_busy (over the connection cap or the bytes of bodies in flight).\n' +
          'hookguard listen: 2 requests answered 503 receiver_busy (over the connection cap or the bytes of bodies in flight).\n',
      )
    })

    it('by default holds 32 bodies of the size limit that never finish, and answers the next at once', async () => {
      const listener = await listen(['--mode', 'none'])
      for (let i = 0; i < 32; i++) await stalledUpload(listener.url, MiB)
      await new Promise((resolve) => setTimeout(resolve, 100))
      const next = await stalledUpload(listener.url, MiB)
      const answer = await next.reply(5_000)
      expect(answer?.status).toBe(503)
      expect(await next.closed()).toBe(true)
      expect(await listener.stop()).toBe(0)
    })
  })

  it.each([
    ['no --mode', ['listen'], '--mode is required'],
    ['a port out of range', ['listen', '--mode', 'none', '--port', '70000'], '--port must be a whole number'],
    [
      'no room for one body',
      ['listen', '--mode', 'none', '--max-in-flight-bytes', String(1024 * 1024)],
      '--max-in-flight-bytes must be over',
    ],
    ['no connection', ['listen', '--mode', 'none', '--max-connections', '0'], '--max-connections must be a whole number from 1 to 65536'],
    ['no secret', ['listen', '--mode', 'secret', '--port', '0'], 'HOOKGUARD_SECRET'],
    ['a positional argument', ['listen', 'extra', '--mode', 'none'], 'expected no arguments besides options'],
  ])('exits 2 before listening for %s', async (_what, argv, message) => {
    const { io, stdout, stderr } = captureIo()
    expect(await run(argv, io)).toBe(2)
    expect(stderr()).toContain(message)
    expect(stdout()).toBe('')
  })
})

describe('signatures printed by sign', () => {
  it('match what send puts on the wire for the same body', async () => {
    const server = await startServer()
    const signed = captureIo({ env: { HOOKGUARD_SECRET: SECRET } })
    await run(['sign', payloadFile], signed.io)
    await run(['send', server.url, '--mode', 'secret', '--file', payloadFile], captureIo({ env: { HOOKGUARD_SECRET: SECRET } }).io)
    expect(signed.stdout().trim()).toBe(server.requests[0]?.headers['x-service-hmac-signature'])
    expect(signed.stdout().trim()).toBe(await sign(customerCreated.body, SECRET))
  })
})

describe('hookguard send, against a receiver that echoes, floods or hangs', () => {
  /** A plain server for the test's own answers, closed after it. */
  async function rawServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; close(): Promise<void> }> {
    const server = createServer(handler)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve())
          server.closeAllConnections()
        }),
    }
  }

  it('never prints a credential the receiver echoes back, in a header or the body, plain or encoded', async () => {
    const token = 'tok-echoed-31f4a9'
    const password = 'pässword with space+&'
    const echo = await rawServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x')
      if (url.pathname === '/token') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: token, expires_in: 7200 }))
        return
      }
      const seen = JSON.stringify({ url: req.url, authorization: req.headers.authorization ?? '', query: [...url.searchParams] })
      res
        .writeHead(401, { 'content-type': 'application/json', 'x-echo-auth': req.headers.authorization ?? '', 'x-echo-url': req.url ?? '' })
        .end(seen)
    })
    try {
      const runs: { args: string[]; env: Record<string, string>; secrets: string[] }[] = [
        { args: ['--mode', 'basic', '--username', 'hook-user'], env: { HOOKGUARD_PASSWORD: password }, secrets: [password] },
        {
          args: ['--mode', 'oauth2', '--token-url', `${echo.url}/token`, '--appid', 'app-1'],
          env: { HOOKGUARD_APP_SECRET: APP_SECRET },
          secrets: [token, APP_SECRET],
        },
        { args: ['--mode', 'secret'], env: { HOOKGUARD_SECRET: SECRET }, secrets: [SECRET] },
      ]
      for (const { args, env, secrets } of runs) {
        const { io, stdout, stderr } = captureIo({ env })
        expect(await run(['send', `${echo.url}/hooks?secret=${encodeURIComponent(secrets[0] as string)}`, ...args, '-i'], io)).toBe(1)
        const printed = stdout() + stderr()
        expect(printed).toContain('[redacted]')
        const basic = Buffer.from(`hook-user:${password}`).toString('base64')
        for (const secret of [...secrets, basic, encodeURIComponent(password), new URLSearchParams({ p: password }).toString().slice(2)]) {
          expect(printed, `${args[1]}: ${secret}`).not.toContain(secret)
        }
      }
    } finally {
      await echo.close()
    }
  })

  it('reads the first mebibyte of an answer that never ends, says more was not read, and exits by its status', async () => {
    const line = Buffer.from(`${'x'.repeat(1023)}\n`)
    const flood = await rawServer((req, res) => {
      req.resume()
      res.writeHead(200, { 'content-type': 'text/html' })
      // Bounded: 64 MiB at most, far past what send reads, in case it read on.
      let sent = 0
      const more = () => {
        while (sent < 64 * 1024 && res.write(line)) sent++
        if (sent < 64 * 1024) res.once('drain', more)
        else res.end()
      }
      more()
    })
    try {
      const { io, stdout } = captureIo({ env: { HOOKGUARD_SECRET: SECRET } })
      expect(await run(['send', flood.url, '--mode', 'secret'], io)).toBe(0)
      expect(stdout()).toMatch(/^200 OK\ncontent-type: text\/html\n(x{1023}\n){2}/)
      expect(stdout()).toMatch(/… \d+ more bytes, and more not read\n$/)
    } finally {
      await flood.close()
    }
  })

  it('gives up on a receiver that never answers after --timeout, and exits 1 saying so', async () => {
    const silent = await rawServer((req) => {
      req.resume()
    })
    try {
      const { io, stderr } = captureIo({ env: { HOOKGUARD_SECRET: SECRET } })
      expect(await run(['send', `${silent.url}/hooks?x=1`, '--mode', 'secret', '--timeout', '0.5'], io)).toBe(1)
      expect(stderr()).toBe(`hookguard: no answer from ${silent.url}/hooks within 0.5 s\n`)
      // The time is the receiver's: a payload piped in slowly does not spend it.
      const server = await startServer(() => ({ status: 200, body: '{"ok":true}' }))
      const slow = captureIo({ env: { HOOKGUARD_SECRET: SECRET } })
      slow.io.stdin = Object.assign(
        (async function* () {
          await new Promise((resolve) => setTimeout(resolve, 700))
          yield '{"event":"ping"}'
        })(),
        { isTTY: false },
      )
      expect(await run(['send', server.url, '--mode', 'secret', '--file', '-', '--timeout', '0.5'], slow.io)).toBe(0)
      for (const bad of ['0', '-1', 'soon', '3601']) {
        const refused = captureIo({ env: { HOOKGUARD_SECRET: SECRET } })
        expect(await run(['send', silent.url, '--mode', 'secret', '--timeout', bad], refused.io), bad).toBe(2)
        expect(refused.stderr(), bad).toContain('--timeout')
      }
    } finally {
      await silent.close()
    }
  })
})
