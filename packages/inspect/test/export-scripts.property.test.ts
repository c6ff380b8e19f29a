import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { transformSync } from 'esbuild'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../../emulator/src/cli/run.ts'
import { type ExportFormat, exportAs } from '../src/export.ts'
import { fixtureJson, fixtureTest } from '../src/fixture.ts'
import type { InspectedRecord } from '../src/record.ts'
import { checkRecord } from '../src/record-shape.ts'
import { decodeName, isCredentialHeader, isCredentialName, redactBody } from '../src/redact.ts'
import { shellQuote } from '../src/shell.ts'

/**
 * Every export that is a script, run under `sh` (dash) and `bash` against a capturing server, for
 * records holding any byte the receiving server accepts where it accepts it, hostile text among
 * them: no text of a request ever runs (a canary file), and the request that arrives is the one
 * recorded, or the script says what differs (`# Differs from the recording: …`).
 */

const RECORDS = 200

/** A run's seed, named in each failure; `HOOKGUARD_SEED=<seed>` runs that draw again. */
const seedFor = () => (process.env.HOOKGUARD_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.HOOKGUARD_SEED))
const SHELLS = ['sh', 'bash'] as const
const SCRIPTS: ExportFormat[] = ['curl', 'send']
const CANARY = 'CANARY'
/**
 * Segments under each script's own path that a recorded target's `..` segments may take: a URL
 * parser resolves them (hookguard send says so), and the script's path must still reach it.
 */
const STEPS = '/_'.repeat(8)

/** Text that a shell would run, expand or glob if it ever reached one unquoted, or a comment it could end. */
const HOSTILE = [
  `touch ${CANARY}`,
  `$(touch ${CANARY})`,
  `\`touch ${CANARY}\``,
  `\ntouch ${CANARY} #`,
  `\rtouch ${CANARY}\n`,
  `;touch ${CANARY};`,
  `&&touch ${CANARY}`,
  `|touch ${CANARY}`,
  `>${CANARY}`,
  `'$(touch ${CANARY})'`,
  `"$(touch ${CANARY})"`,
  '\\',
  '*',
  '?',
  '[1-3]',
  '{a,b,c}',
  '%s%n',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's expansion, as a sender would write it
  '${HOOKGUARD_SECRET}',
  '$HOOKGUARD_SECRET',
  '#',
  '-',
  '--help',
  '!!',
  '~',
  '\t',
  '\0',
  '\u00e9',
  '\u00ff',
]

const JS_HOSTILE = [
  `'); globalThis.${CANARY} = true; ('`,
  `"); globalThis.${CANARY} = true; ("`,
  `\nglobalThis.${CANARY} = true //`,
  `\u2028globalThis.${CANARY} = true //`,
  `\rglobalThis.${CANARY} = true //`,
  `*/ globalThis.${CANARY} = true /*`,
  `\${globalThis.${CANARY} = true}`,
  `\`); globalThis.${CANARY} = true; (\``,
]

/** hookguard's own variables, each set to a value that must never travel where the export would put a sender's. */
const OWN = {
  HOOKGUARD_SECRET: 'own-signing-secret-7d1e',
  HOOKGUARD_APP_SECRET: 'own-app-secret-52aa',
  HOOKGUARD_PASSWORD: 'own-basic-password-90c3',
}

const CREDENTIAL_NAMES = [
  'secret',
  '_secret',
  '.secret',
  'Secret',
  'password',
  'access_token',
  'access%5Ftoken',
  'secr%65t',
  'client_secret',
  'app_secret',
  'refresh_token',
]

/** Strings of single bytes (as latin1 characters) that `allowed` accepts, hostile text among them. */
function bytesOf(allowed: (code: number) => boolean, maxLength = 12): fc.Arbitrary<string> {
  const hostile = HOSTILE.filter((text) => [...text].every((character) => allowed(character.charCodeAt(0))))
  const unit = fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .integer({ min: 0, max: 255 })
        .filter(allowed)
        .map((code) => String.fromCharCode(code)),
    },
    { weight: 1, arbitrary: fc.constantFrom(...hostile) },
  )
  return fc.array(unit, { maxLength }).map((units) => units.join(''))
}

/** What Node's parser accepts in a request target: printable ASCII without the space. */
const inTarget = (code: number) => code >= 0x21 && code <= 0x7e
/** In a header value: tab, printable ASCII and every byte from 0x80 (read as latin1). */
const inValue = (code: number) => code === 0x09 || (code >= 0x20 && code <= 0x7e) || code >= 0x80
const TOKEN = "!#$%&'*+.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-"
const inToken = (code: number) => TOKEN.includes(String.fromCharCode(code))

/** Node trims a value's leading and trailing spaces and tabs: a recorded value never has them. */
const headerValue = bytesOf(inValue, 16).map((value) => value.replace(/^[\t ]+|[\t ]+$/g, ''))
const NOT_RANDOM =
  /^(host|content-length|transfer-encoding|connection|upgrade|expect|te|trailer|keep-alive|proxy-connection|authorization|cookie|proxy-authorization|content-type)$/i
const headerName = bytesOf(inToken, 10).filter((name) => name !== '' && !NOT_RANDOM.test(name))

/** A credential's name as a sender may write it: one of the words matched, with any text around it. */
const credentialName = (allowed: (code: number) => boolean) =>
  fc.oneof(
    fc.constantFrom(...CREDENTIAL_NAMES),
    fc.tuple(bytesOf(allowed, 4), fc.constantFrom(...CREDENTIAL_NAMES), bytesOf(allowed, 4)).map((parts) => parts.join('')),
  )

const queryPart = fc.oneof(
  fc
    .tuple(
      credentialName((code) => inTarget(code) && code !== 0x26 && code !== 0x3d),
      bytesOf((code) => inTarget(code) && code !== 0x26),
    )
    .map(([n, v]) => `${n}=${v}`),
  bytesOf(inTarget),
)
// Often a second `/` or a `\` first: an empty segment, and a backslash a URL parser reads as a slash.
const target = fc
  .tuple(fc.constantFrom('', '', '/', '\\'), bytesOf(inTarget, 16), fc.option(fc.array(queryPart, { maxLength: 5 }), { nil: undefined }))
  .map(([lead, path, query]) => `/${lead}${path}${query === undefined ? '' : `?${query.join('&')}`}`)

const anyBytes = bytesOf(() => true, 16)
const formBody = fc
  .array(
    fc.tuple(
      fc.oneof(
        credentialName((code) => code !== 0x26 && code !== 0x3d),
        anyBytes,
      ),
      fc.option(anyBytes, { nil: undefined }),
    ),
    { maxLength: 6 },
  )
  .map((fields) => fields.map(([name, value]) => (value === undefined ? name : `${name}=${value}`)).join('&'))

const basic = fc
  // A password is never empty: a command refuses an empty credential rather than send it.
  .tuple(
    bytesOf((code) => code >= 0x20 && code <= 0x7e && code !== 0x3a, 8),
    bytesOf((code) => code >= 0x20 && code <= 0x7e, 10).filter((password) => password !== ''),
  )
  .map(([user, password]) => `Basic ${Buffer.from(`${user}:${password}`, 'latin1').toString('base64')}`)

const record: fc.Arbitrary<InspectedRecord> = fc
  .record({
    method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'PROPFIND', 'M-SEARCH', 'PURGE'),
    url: target,
    mode: fc.constantFrom('secret', 'basic', 'oauth2', 'none' as const),
    headers: fc.array(fc.tuple(headerName, headerValue), { maxLength: 5 }),
    contentType: fc.option(
      fc.constantFrom('application/x-www-form-urlencoded', 'Application/X-WWW-Form-Urlencoded; charset=x', 'application/json', ''),
      {
        nil: undefined,
      },
    ),
    body: fc.oneof(formBody, anyBytes, fc.constant('')),
    framing: fc.constantFrom('Content-Length', 'content-length', 'Transfer-Encoding', 'TRANSFER-ENCODING', 'none'),
    authorization: fc.option(
      fc.oneof(
        basic,
        headerValue.map((token) => `Bearer ${token}`.trim()),
        headerValue,
      ),
      { nil: undefined },
    ),
    authorizationName: fc.constantFrom('Authorization', 'authorization'),
    cookie: fc.option(headerValue, { nil: undefined }),
    proxy: fc.boolean(),
    host: fc.constantFrom('127.0.0.1:4000', 'example.test'),
    // A code read back from a save file is any text: JavaScript that would run if it left its string or comment.
    code: fc.option(
      fc.oneof(
        bytesOf(() => true, 8),
        fc.constantFrom(...JS_HOSTILE),
      ),
      { nil: undefined },
    ),
  })
  .chain((drawn) => {
    // A HEAD with a body: curl waits for an answer's body that never comes (the request itself goes out as recorded).
    const body = new Uint8Array(Buffer.from(drawn.method === 'HEAD' ? '' : drawn.body, 'latin1'))
    const headers: [string, string][] = [['Host', drawn.host], ...drawn.headers]
    if (drawn.contentType !== undefined) headers.push(['Content-Type', drawn.contentType])
    // A body needs framing; an empty one may have none, or a length of 0.
    if (drawn.framing.toLowerCase() === 'transfer-encoding') headers.push([drawn.framing, 'chunked'])
    else if (drawn.framing !== 'none' || body.byteLength > 0)
      headers.push([drawn.framing === 'none' ? 'Content-Length' : drawn.framing, String(body.byteLength)])
    if (drawn.authorization !== undefined) headers.push([drawn.authorizationName, drawn.authorization])
    if (drawn.cookie !== undefined) headers.push(['Cookie', drawn.cookie])
    if (drawn.proxy) headers.push(['Proxy-Authorization', 'Basic cHJveHk6cHc='])
    return fc.shuffledSubarray(headers, { minLength: headers.length, maxLength: headers.length }).map((shuffled) => {
      const made: InspectedRecord = {
        id: 1,
        kind: 'delivery',
        time: 0,
        source: 'sender',
        method: drawn.method,
        url: drawn.url,
        headers: shuffled,
        body,
        bodyBytes: body.byteLength,
        mode: drawn.mode,
        verdict: 'refused',
        status: 401,
        durationMs: 1,
        ...(drawn.code !== undefined && { code: drawn.code }),
      }
      return made
    })
  })

interface Arrival {
  method: string
  url: string
  headers: [string, string][]
  body: Buffer
}

/** `access_token` is the protocol's; every other credential name a sender chose lives under HOOKGUARD_SENT_. */
function expectedVariable(name: string): string {
  const decoded = decodeName(name)
  return decoded === 'access_token' ? 'HOOKGUARD_ACCESS_TOKEN' : sentVariable(decoded)
}

/** A name a sender chose, as a variable under HOOKGUARD_SENT_: capitals, digits and `_`. */
function sentVariable(name: string): string {
  const word = name
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 48)
  return `HOOKGUARD_SENT_${word === '' ? 'VALUE' : word}`
}

/** The environment a script is run with: a value for each variable it needs, as the test can check it arriving. */
function environmentFor(script: string, recorded: InspectedRecord): Record<string, string> {
  const env: Record<string, string> = { ...OWN }
  const authorization = recorded.headers.find(([name]) => name.toLowerCase() === 'authorization')?.[1]
  for (const [, variable] of script.matchAll(/^# Needs ([A-Z0-9_]+) in the environment/gm)) {
    const name = variable as string
    if (name in OWN) continue
    env[name] = `v-${name}`
  }
  if (authorization !== undefined) {
    if (/^bearer /i.test(authorization)) env.HOOKGUARD_ACCESS_TOKEN = authorization.slice(7)
    const decoded = Buffer.from(authorization.slice(6), 'base64').toString('latin1')
    if (/^basic /i.test(authorization) && decoded.includes(':') && !decoded.includes('\0')) {
      env.HOOKGUARD_PASSWORD = decoded.slice(decoded.indexOf(':') + 1)
    }
    if ('HOOKGUARD_SENT_AUTHORIZATION' in env) env.HOOKGUARD_SENT_AUTHORIZATION = authorization
  }
  // Cookies and the like (X-Api-Key, a name holding `secret` or `token`): each from its own variable under HOOKGUARD_SENT_.
  for (const [name, value] of recorded.headers) {
    if (name.toLowerCase() === 'authorization' || name.toLowerCase() === 'proxy-authorization' || !isCredentialHeader(name)) continue
    const variable = sentVariable(name)
    if (variable in env && env[variable] === `v-${variable}`) env[variable] = value
  }
  return env
}

/** The `&`-separated fields of a query or a form: equal byte for byte, a credential's value equal to its variable's once decoded. */
function expectFields(arrived: string, recorded: string, env: Record<string, string>, what: string): void {
  const got = arrived.split('&')
  const want = recorded.split('&')
  expect(got.length, what).toBe(want.length)
  want.forEach((field, index) => {
    const at = field.indexOf('=')
    const name = at < 0 ? field : field.slice(0, at)
    if (at >= 0 && isCredentialName(name)) {
      const arrivedField = got[index] ?? ''
      expect(arrivedField.slice(0, at + 1), what).toBe(field.slice(0, at + 1))
      expect(decodeName(arrivedField.slice(at + 1)), what).toBe(env[expectedVariable(name)])
    } else {
      expect(got[index], what).toBe(field)
    }
  })
}

/** Headers compared as a set, same-name headers in their order: curl writes Host and `-u`'s Authorization where it likes. */
const sorted = (headers: [string, string][]) =>
  headers
    .map(([name, value], index) => ({ name, value, index }))
    .sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()) || a.index - b.index)
    .map(({ name, value }) => [name, value])

function expectArrival(
  format: ExportFormat,
  script: string,
  recorded: InspectedRecord,
  arrival: Arrival,
  env: Record<string, string>,
): void {
  const differs = new Set([...script.matchAll(/^# Differs from the recording: ([^:]+):/gm)].map((match) => match[1] as string))
  const what = `${format}: ${JSON.stringify(recorded.url)}\n${script}`
  // hookguard's own credentials never travel where a sender's were: only Basic's own header carries the password.
  const outside = [
    arrival.url,
    ...arrival.headers.filter(([name]) => name.toLowerCase() !== 'authorization').flat(),
    arrival.body.toString('latin1'),
  ].join('\n')
  for (const value of Object.values(OWN)) {
    const encoded = [...Buffer.from(value)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('')
    expect(outside.includes(value) || outside.includes(encoded), `${what}\nholds ${value}`).toBe(false)
  }
  if (!differs.has('method')) expect(arrival.method, what).toBe(recorded.method)
  if (!differs.has('target')) {
    const [path, query] = [
      recorded.url.split('?')[0],
      recorded.url.includes('?') ? recorded.url.slice(recorded.url.indexOf('?') + 1) : undefined,
    ]
    const arrivedQuery = arrival.url.includes('?') ? arrival.url.slice(arrival.url.indexOf('?') + 1) : undefined
    expect(arrival.url.split('?')[0], what).toBe(`${STEPS}${path}`)
    expect(arrivedQuery === undefined, what).toBe(query === undefined)
    if (query !== undefined) expectFields(arrivedQuery ?? '', query, env, what)
  }
  if (!differs.has('body')) expect(arrival.body.toString('latin1'), what).toBe(Buffer.from(recorded.body).toString('latin1'))
  else if (recorded.bodyBytes === recorded.body.byteLength)
    expectFields(arrival.body.toString('latin1'), Buffer.from(recorded.body).toString('latin1'), env, what)
  if (!differs.has('headers')) {
    const declared = new Set([...differs].filter((d) => d.startsWith('header ')).map((d) => d.slice(7).toLowerCase()))
    const left = ([name]: [string, string]) =>
      !declared.has(name.toLowerCase()) && !(differs.has('body') && name.toLowerCase() === 'content-length')
    expect(sorted(arrival.headers.filter(left)), what).toEqual(sorted(recorded.headers.filter(left)))
  }
}

/**
 * A script driving many exported scripts in one process, each in a subshell with its own
 * environment. The values are the bytes themselves in single quotes (the file is written as
 * latin1), not a `printf` in a command substitution: that was a process for every variable.
 */
function driver(shell: string, entries: { file: string; env: Record<string, string> }[]): Buffer {
  const text = entries
    .map(({ file, env }) => {
      const exports = Object.entries(env)
        .map(([name, value]) => `export ${name}=${shellQuote(value)}\n`)
        .join('')
      return `(\n${exports}exec ${shell} ./${file}\n) >${file}.out 2>${file}.err\n`
    })
    .join('')
  return Buffer.from(text, 'latin1')
}

/**
 * How long a driver may run before it is stopped: a bound against a hang, not a time the scripts
 * must keep. Their 800 runs take about 13 s alone, but each forks a shell, curl or the shim, and
 * beside a second whole `pnpm test` in a slow hour they took over 120 s, the bound they had.
 */
const DRIVER_TIMEOUT_MS = 300_000

function runScript(file: string, cwd: string, env: Record<string, string>): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', [file], { cwd, env, stdio: 'ignore', timeout: DRIVER_TIMEOUT_MS })
    child.on('error', reject)
    child.on('close', resolve)
  })
}

let dir = ''
let server: ReturnType<typeof createServer>
let origin = ''
const arrivals = new Map<string, Arrival[]>()

/**
 * `hookguard` on PATH: a shell stand-in that hands its arguments, standard input and the
 * variables `send` reads to this process, which runs the real command line in-process (a Node
 * start per delivery would take the run past its time). It asks over bash's /dev/tcp rather
 * than with curl: a curl start per delivery was a fifth of the run's CPU time. Its files are
 * named by its own process id, which no other running stand-in has, rather than put in a
 * directory `mktemp` makes: a process started costs more than the rest of the stand-in's work.
 * This process removes them once read, before the stand-in exits and its id can be reused.
 */
const SHIM = `#!/bin/bash
d="$HOOKGUARD_SHIM_DIR/call.$$"
printf '%s' "$#" > "$d.argc" || exit 3
i=0
for a in "$@"; do printf '%s' "$a" > "$d.arg.$i"; i=$((i + 1)); done
cat > "$d.stdin"
for v in HOOKGUARD_SECRET HOOKGUARD_PASSWORD HOOKGUARD_APP_SECRET; do printf '%s' "\${!v}" > "$d.env.$v"; done
exec 3<>"/dev/tcp/127.0.0.1/$HOOKGUARD_SHIM_PORT" || exit 3
printf 'POST /__shim HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\nContent-Length: %d\\r\\n\\r\\n%s' "\${#d}" "$d" >&3
# The answer's head, up to its blank line; then its body, the exit code.
while IFS= read -r line <&3 && [ "$line" != $'\\r' ]; do :; done
IFS= read -r code <&3
exit "\${code:-3}"
`

async function shim(call: string): Promise<number> {
  const files = [`${call}.argc`, `${call}.stdin`]
  const argc = Number(readFileSync(`${call}.argc`, 'latin1'))
  const args: string[] = []
  for (let i = 0; i < argc; i++) files.push(`${call}.arg.${i}`)
  for (const file of files.slice(2)) args.push(readFileSync(file, 'utf8'))
  const env: Record<string, string> = {}
  for (const name of Object.keys(OWN)) {
    files.push(`${call}.env.${name}`)
    env[name] = readFileSync(`${call}.env.${name}`, 'latin1')
  }
  const stdin = readFileSync(`${call}.stdin`)
  for (const file of files) rmSync(file)
  const sink = { write: () => true }
  async function* input() {
    yield new Uint8Array(stdin)
  }
  return run(args, { stdout: sink, stderr: sink, env, stdin: input() })
}

function capture(req: IncomingMessage, res: ServerResponse): void {
  const parts: Buffer[] = []
  req.on('data', (chunk: Buffer) => parts.push(chunk))
  req.on('end', () => {
    const url = req.url ?? ''
    const body = Buffer.concat(parts)
    if (url === '/__shim') {
      void shim(body.toString()).then(
        (code) => res.end(String(code)),
        () => res.end('4'),
      )
      return
    }
    if (url.startsWith('/token?')) {
      res.setHeader('content-type', 'application/json')
      res.end('{"access_token":"fresh-token-1","expires_in":7200}')
      return
    }
    const key = /^\/[a-z]+-[a-z]+-\d+/.exec(url)?.[0] ?? ''
    const headers: [string, string][] = []
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string])
    const list = arrivals.get(key) ?? []
    list.push({ method: req.method ?? '', url: url.slice(key.length), headers, body })
    arrivals.set(key, list)
    // No body: curl -X HEAD reads the body a length announces, and would wait for the
    // connection to close. Closed at once: kept alive, a HEAD's answer (no length) left its curl
    // waiting a second for the server to close the connection.
    res.setHeader('connection', 'close')
    res.end()
  })
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hookguard-export-'))
  writeFileSync(join(dir, 'hookguard'), SHIM)
  chmodSync(join(dir, 'hookguard'), 0o755)
  server = createServer(capture)
  // An inspector's record can hold a long head; keep-alive off so that each script's curl ends at once.
  server.keepAliveTimeout = 1
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  // Every script has ended: a connection still open (a client's idle keep-alive one) is not waited for.
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
  // Retried: a script stopped by its driver's bound may still be writing its last files there.
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 })
})

describe('every exported script, under sh and bash', () => {
  it(
    `runs no text of the request and sends the record, or says what differs (${RECORDS} records × ${SCRIPTS.length} formats × ${SHELLS.length} shells)`,
    async () => {
      const seed = seedFor()
      const records = fc.sample(record, { numRuns: RECORDS, seed }).map((made, index) => ({ ...made, id: index + 1 }))
      for (const made of records) expect(checkRecord(made, { maxBodySize: 1024 * 1024 }), `seed ${seed}`).toBeDefined()
      const cases: { key: string; format: ExportFormat; script: string; recorded: InspectedRecord; env: Record<string, string> }[] = []
      const drivers: string[] = []
      for (const format of SCRIPTS) {
        for (const shell of SHELLS) {
          const entries: { file: string; env: Record<string, string> }[] = []
          for (const recorded of records) {
            const key = `/${format}-${shell}-${recorded.id}`
            const context = { url: `${origin}${key}${STEPS}`, username: 'hook-user', appId: 'app-1' }
            const { text } = exportAs(format, recorded, context)
            const file = `${format}-${shell}-${recorded.id}.sh`
            writeFileSync(join(dir, file), text)
            const env = environmentFor(text, recorded)
            entries.push({ file, env })
            cases.push({ key, format, script: text, recorded, env })
          }
          const file = `driver-${format}-${shell}.sh`
          writeFileSync(join(dir, file), driver(shell, entries))
          drivers.push(file)
        }
      }
      const environment = {
        PATH: `${dir}:${process.env.PATH}`,
        HOOKGUARD_SHIM_DIR: dir,
        HOOKGUARD_SHIM_PORT: origin.split(':')[2] as string,
        LC_ALL: 'C',
      }
      await Promise.all(drivers.map((file) => runScript(file, dir, environment)))

      expect(existsSync(join(dir, CANARY)), `seed ${seed}: text of a request ran`).toBe(false)
      const unexpected = readdirSync(dir).filter((name) => !/^(hookguard|(curl|send|driver)-[\w.-]+)$/.test(name))
      expect(unexpected, `seed ${seed}`).toEqual([])
      for (const { key, format, script, recorded, env } of cases) {
        const arrived = arrivals.get(key) ?? []
        const errors = readFileSync(join(dir, `${key.slice(1)}.sh.err`), 'latin1')
        expect(arrived.length, `seed ${seed}: ${key} ${errors}\n${script}`).toBe(1)
        expectArrival(format, script, recorded, arrived[0] as Arrival, env)
      }
      // Past the drivers' own bound, so that a driver stopped for a hang is reported by what it never sent.
    },
    DRIVER_TIMEOUT_MS + 30_000,
  )
})

describe('the fixture and HAR exports', () => {
  it('carry the record as data: JSON that reads back as the record, and a Vitest file where no text leaves its string', () => {
    const seed = seedFor()
    const records = fc.sample(record, { numRuns: 200, seed }).map((made, index) => ({ ...made, id: index + 1 }))
    const context = { url: 'http://127.0.0.1:4000', username: 'hook-user', appId: 'app-1' }
    for (const recorded of records) {
      const what = `seed ${seed}: ${JSON.stringify(recorded.url)} ${JSON.stringify(recorded.code)}`
      const har = JSON.parse(exportAs('har', recorded, context).text)
      expect(har.log.entries[0].request.method, what).toBe(recorded.method)
      expect(
        har.log.entries[0].request.headers.map(({ name }: { name: string }) => name),
        what,
      ).toEqual(recorded.headers.map(([name]) => name))
      const fixture = JSON.parse(fixtureJson(recorded))
      expect(fixture.method, what).toBe(recorded.method)
      expect(Buffer.from(fixture.bodyBase64, 'base64'), what).toEqual(Buffer.from(redactBody(recorded.headers, recorded.body)))
      // The Vitest file, compiled and run with stand-ins: a canary set by any code that escaped a string or a comment.
      const { code } = transformSync(fixtureTest(recorded, context), {
        loader: 'ts',
        format: 'cjs',
        define: { 'import.meta.url': '"file:///f/"' },
      })
      const titles: string[] = []
      const modules: Record<string, unknown> = {
        'node:fs': { readFileSync: () => JSON.stringify(fixture) },
        '@hookguard/core': { createReceiver: () => ({}), sign: async () => '' },
        vitest: { it: (title: string) => titles.push(title), expect },
      }
      const scope = globalThis as { [CANARY]?: boolean }
      new Function('require', 'module', 'exports', code)((name: string) => modules[name], { exports: {} }, {})
      expect(scope[CANARY], what).toBeUndefined()
      expect(titles, what).toEqual([
        `answers delivery #${recorded.id} as recorded: ${recorded.verdict}${recorded.code === undefined ? '' : ` (${recorded.code})`}`,
      ])
    }
  })
})
