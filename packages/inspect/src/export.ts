import { DEFAULT_SIGNATURE_HEADER } from '@hookguard/core'
import type { InspectedRecord } from './record.ts'
import { REDACTED, redactUrl } from './redact.ts'

/**
 * A delivery as something to keep or run again: a `hookguard send` command, a curl command that
 * posts the exact bytes, a HAR file, and a Vitest fixture. Credentials are never written out:
 * commands read them from the environment (`HOOKGUARD_SECRET`, `HOOKGUARD_PASSWORD`,
 * `HOOKGUARD_APP_SECRET`), and the fixture's test re-authenticates with them.
 */

export type ExportFormat = 'send' | 'curl' | 'har' | 'fixture' | 'fixture-test'

export interface ExportContext {
  /** The address the export sends to: the inspector's own receiving address, or the app's. */
  url: string
  /** Mode `basic`: the user name (not a secret). */
  username?: string
  /** Mode `oauth2`: the app id (not a secret). */
  appId?: string
  signatureHeader?: string
  tokenPath?: string
}

/** The headers a command need not repeat: the framing (curl writes its own) and the connection's. */
const FRAMING = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'expect', 'accept-encoding'])

/** POSIX single quotes: `'` is closed, escaped and reopened, so nothing inside is interpreted. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`
}

/**
 * A `printf` format that writes exactly these bytes: printable ASCII as it is (with `%` and `\`
 * doubled), every other byte as a three-digit octal escape, so NUL, newlines and UTF-8 survive
 * any shell. `printf` (POSIX) interprets the escapes in its format.
 */
export function printfBytes(body: Uint8Array): string {
  let out = ''
  for (const byte of body) {
    if (byte === 0x25) out += '%%'
    else if (byte === 0x5c) out += '\\\\'
    else if (byte === 0x27) out += '\\047'
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte)
    else out += `\\${byte.toString(8).padStart(3, '0')}`
  }
  return `printf '${out}'`
}

function targetUrl(record: InspectedRecord, base: string): string {
  const url = new URL(base)
  const query = record.url.indexOf('?') < 0 ? '' : record.url.slice(record.url.indexOf('?') + 1)
  const path = record.url.indexOf('?') < 0 ? record.url : record.url.slice(0, record.url.indexOf('?'))
  const params = new URLSearchParams(query)
  // A recorded token has expired by the time anyone runs this: `send` fetches a new one.
  params.delete('access_token')
  const rest = params.toString()
  return `${url.origin}${url.pathname.replace(/\/$/, '')}${path}${rest === '' ? '' : `?${rest}`}`
}

/** `hookguard send`, re-authenticated from the environment, the body piped as its exact bytes. */
export function toSendCommand(record: InspectedRecord, context: ExportContext): string {
  const url = targetUrl(record, context.url)
  const args = [`hookguard send ${shellQuote(url)}`, `--mode ${record.mode}`]
  if (record.mode === 'secret') {
    const header = context.signatureHeader ?? DEFAULT_SIGNATURE_HEADER
    if (header.toLowerCase() !== DEFAULT_SIGNATURE_HEADER.toLowerCase()) args.push(`--signature-header ${shellQuote(header)}`)
  }
  if (record.mode === 'basic') args.push(`--username ${shellQuote(context.username ?? '')}`)
  if (record.mode === 'oauth2') {
    const tokenUrl = `${new URL(context.url).origin}${context.tokenPath ?? '/token'}`
    args.push(`--token-url ${shellQuote(tokenUrl)}`, `--appid ${shellQuote(context.appId ?? '')}`)
  }
  args.push('--file -')
  const env =
    record.mode === 'secret'
      ? '# Needs HOOKGUARD_SECRET in the environment.\n'
      : record.mode === 'basic'
        ? '# Needs HOOKGUARD_PASSWORD in the environment.\n'
        : record.mode === 'oauth2'
          ? '# Needs HOOKGUARD_APP_SECRET in the environment.\n'
          : ''
  return `${env}${printfBytes(record.body)} | ${args.join(' ')}\n`
}

/** curl posting the exact bytes (`--data-binary @-` from `printf`), with every end-to-end header as recorded. */
export function toCurl(record: InspectedRecord, context: ExportContext): string {
  const lines = [`curl -sS -X ${record.method} ${shellQuote(targetUrl(record, context.url))}`]
  let env = ''
  for (const [name, value] of record.headers) {
    const lower = name.toLowerCase()
    if (FRAMING.has(lower)) continue
    if (lower === 'authorization') {
      if (/^basic\s/i.test(value)) {
        const decoded = Buffer.from(value.trim().split(/\s+/)[1] ?? '', 'base64').toString('utf8')
        const user = decoded.slice(0, Math.max(0, decoded.indexOf(':')))
        lines.push(`-u ${shellQuote(user)}":$HOOKGUARD_PASSWORD"`)
        env = '# Needs HOOKGUARD_PASSWORD in the environment.\n'
      } else {
        lines.push(`-H "${name}: Bearer $HOOKGUARD_ACCESS_TOKEN"`)
        env = '# Needs HOOKGUARD_ACCESS_TOKEN in the environment (hookguard token …).\n'
      }
      continue
    }
    lines.push(`-H ${shellQuote(`${name}: ${value}`)}`)
  }
  if (/[?&]access_token=/.test(record.url)) {
    lines.push(`--url-query "access_token=$HOOKGUARD_ACCESS_TOKEN"`)
    env = '# Needs HOOKGUARD_ACCESS_TOKEN in the environment (hookguard token …).\n'
  }
  lines.push('--data-binary @-')
  return `${env}${printfBytes(record.body)} | ${lines.join(' \\\n  ')}\n`
}

/** HAR 1.2 (one entry), credentials replaced. */
export function toHar(record: InspectedRecord, context: ExportContext): string {
  const url = `${new URL(context.url).origin}${redactUrl(record.url)}`
  const text = new TextDecoder('utf-8', { fatal: false }).decode(record.body)
  const isText = Buffer.from(text, 'utf8').equals(Buffer.from(record.body))
  const contentType = record.headers.find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? 'application/octet-stream'
  const headers = record.headers.map(([name, value]) => ({
    name,
    value: name.toLowerCase() === 'authorization' ? `${value.split(/\s+/)[0]} ${REDACTED}` : value,
  }))
  const app = record.app
  const har = {
    log: {
      version: '1.2',
      creator: { name: '@hookguard/inspect', version: '1' },
      entries: [
        {
          startedDateTime: new Date(record.time).toISOString(),
          time: record.durationMs,
          request: {
            method: record.method,
            url,
            httpVersion: 'HTTP/1.1',
            cookies: [],
            headers,
            queryString: [...new URL(url).searchParams].map(([name, value]) => ({ name, value })),
            postData: isText
              ? { mimeType: contentType, text }
              : { mimeType: contentType, text: Buffer.from(record.body).toString('base64'), encoding: 'base64' },
            headersSize: -1,
            bodySize: record.bodyBytes,
          },
          response: {
            status: app?.status ?? record.status,
            statusText: '',
            httpVersion: 'HTTP/1.1',
            cookies: [],
            headers: (app?.headers ?? []).map(([name, value]) => ({ name, value })),
            content: {
              size: app?.body.byteLength ?? 0,
              mimeType: app?.headers.find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? '',
              text: app === undefined ? '' : new TextDecoder().decode(app.body),
            },
            redirectURL: '',
            headersSize: -1,
            bodySize: app?.body.byteLength ?? -1,
          },
          cache: {},
          timings: { send: 0, wait: app?.durationMs ?? record.durationMs, receive: 0 },
          comment: `hookguard: ${record.verdict}${record.code === undefined ? '' : ` (${record.code})`}`,
        },
      ],
    },
  }
  return `${JSON.stringify(har, null, 2)}\n`
}

/** The fixture a Vitest test replays: the request as recorded (credentials left out) and the verdict to expect. */
export interface Fixture {
  id: number
  method: string
  /** Path and query, `access_token` left out. */
  path: string
  mode: InspectedRecord['mode']
  /** As recorded, `Authorization` left out (the test writes its own from the environment). */
  headers: [string, string][]
  bodyBase64: string
  expected: { verdict: 'verified' | 'refused'; status: number; code?: string; hint?: string }
  /** Whether the recorded request carried credentials the test must add back (Basic, a token). */
  authenticated: boolean
}

export function toFixture(record: InspectedRecord): Fixture {
  const query = record.url.indexOf('?') < 0 ? '' : record.url.slice(record.url.indexOf('?') + 1)
  const params = new URLSearchParams(query)
  const hadToken = params.has('access_token')
  params.delete('access_token')
  const path = `${record.url.split('?')[0]}${params.toString() === '' ? '' : `?${params}`}`
  const hadAuthorization = record.headers.some(([name]) => name.toLowerCase() === 'authorization')
  return {
    id: record.id,
    method: record.method,
    path,
    mode: record.mode,
    headers: record.headers.filter(
      ([name]) => !['authorization', 'host', 'connection', 'keep-alive', 'transfer-encoding'].includes(name.toLowerCase()),
    ),
    bodyBase64: Buffer.from(record.body).toString('base64'),
    expected: {
      verdict: record.verdict,
      status: record.status,
      ...(record.code !== undefined && { code: record.code }),
      ...(record.hint !== undefined && { hint: record.hint }),
    },
    authenticated: hadToken || hadAuthorization,
  }
}

export function fixtureJson(record: InspectedRecord): string {
  return `${JSON.stringify(toFixture(record), null, 2)}\n`
}

/** The name the fixture files take: `delivery-<id>.json` and `delivery-<id>.test.ts`. */
export const fixtureName = (record: InspectedRecord) => `delivery-${record.id}`

/**
 * A Vitest file that replays the fixture through `createReceiver`, with the settings from the
 * environment (the same variables as `hookguard inspect`), and asserts the recorded verdict and
 * code. Point `receiver` at your own options to pin your app's behaviour.
 */
/**
 * The generated test's imports, written out at run time: as literal text in this module, a
 * packaging check that reads imports from the bundle would take them for this package's own.
 */
const TEST_IMPORTS = (
  [
    ['readFileSync', 'node:fs'],
    ['createReceiver', '@hookguard/core'],
    ['expect, it', 'vitest'],
  ] as const
)
  .map(([names, from]) => `import { ${names} } from ${`'${from}'`}`)
  .join('\n')

export function fixtureTest(record: InspectedRecord, context: ExportContext): string {
  const name = fixtureName(record)
  const fixture = toFixture(record)
  const header = context.signatureHeader ?? DEFAULT_SIGNATURE_HEADER
  const auth =
    record.mode === 'secret'
      ? `{ mode: 'secret', secret: env('HOOKGUARD_SECRET').split(',') }`
      : record.mode === 'basic'
        ? `{ mode: 'basic', username: env('HOOKGUARD_USERNAME', ${JSON.stringify(context.username ?? '')}), password: env('HOOKGUARD_PASSWORD') }`
        : record.mode === 'oauth2'
          ? `{ mode: 'oauth2', appId: env('HOOKGUARD_APPID', ${JSON.stringify(context.appId ?? '')}), secret: env('HOOKGUARD_APP_SECRET') }`
          : `{ mode: 'none' }`
  const credentials =
    !fixture.authenticated || record.mode === 'secret' || record.mode === 'none'
      ? ''
      : record.mode === 'basic'
        ? `  // The recorded Authorization is not kept: written again from the environment.
  const user = env('HOOKGUARD_USERNAME', ${JSON.stringify(context.username ?? '')})
  headers.set('authorization', \`Basic \${Buffer.from(\`\${user}:\${env('HOOKGUARD_PASSWORD')}\`).toString('base64')}\`)
`
        : `  // The recorded token has expired by now: a fresh one from the same settings.
  const issued = await receiver.token(
    new Request(\`http://localhost/token?appid=\${encodeURIComponent(env('HOOKGUARD_APPID', ${JSON.stringify(context.appId ?? '')}))}&secret=\${encodeURIComponent(env('HOOKGUARD_APP_SECRET'))}&grant_type=client_credentials\`),
  )
  url.searchParams.set('access_token', (JSON.parse(issued.body) as { access_token: string }).access_token)
`
  return `// Recorded by hookguard inspect: delivery #${record.id}, ${record.verdict}${record.code === undefined ? '' : ` (${record.code})`}.
// Run with: npx vitest run ${name}.test.ts (settings from the same environment variables as hookguard inspect)
${TEST_IMPORTS}

interface Fixture {
  method: string
  path: string
  headers: [string, string][]
  bodyBase64: string
  expected: { verdict: 'verified' | 'refused'; status: number; code?: string; hint?: string }
}

const fixture = JSON.parse(readFileSync(new URL('./${name}.json', import.meta.url), 'utf8')) as Fixture

function env(name: string, fallback?: string): string {
  const value = process.env[name] ?? fallback
  if (value === undefined || value === '') throw new Error(\`set \${name} to the settings the delivery was recorded with\`)
  return value
}

it('answers delivery #${record.id} as recorded: ${record.verdict}${record.code === undefined ? '' : ` (${record.code})`}', async () => {
  const receiver = createReceiver({ auth: ${auth}, signatureHeader: ${JSON.stringify(header)} })
  const url = new URL(fixture.path, 'http://localhost')
  const headers = new Headers(fixture.headers)
${credentials}  const result = await receiver.verify(
    new Request(url, { method: fixture.method, headers, body: Buffer.from(fixture.bodyBase64, 'base64') }),
  )
  if (fixture.expected.verdict === 'verified') {
    expect(result.ok).toBe(true)
  } else {
    expect(result.ok).toBe(false)
    if (!result.ok) {
      expect(result.response.status).toBe(fixture.expected.status)
      expect(result.error?.code).toBe(fixture.expected.code)
    }
  }
})
`
}

export function exportAs(
  format: ExportFormat,
  record: InspectedRecord,
  context: ExportContext,
): { text: string; filename: string; type: string } {
  const name = fixtureName(record)
  switch (format) {
    case 'send':
      return { text: toSendCommand(record, context), filename: `${name}.send.sh`, type: 'text/plain; charset=utf-8' }
    case 'curl':
      return { text: toCurl(record, context), filename: `${name}.curl.sh`, type: 'text/plain; charset=utf-8' }
    case 'har':
      return { text: toHar(record, context), filename: `${name}.har`, type: 'application/json; charset=utf-8' }
    case 'fixture':
      return { text: fixtureJson(record), filename: `${name}.json`, type: 'application/json; charset=utf-8' }
    case 'fixture-test':
      return { text: fixtureTest(record, context), filename: `${name}.test.ts`, type: 'text/plain; charset=utf-8' }
  }
}
