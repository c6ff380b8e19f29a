import { DEFAULT_SIGNATURE_HEADER } from '@hookguard/core'
import { fixtureJson, fixtureName, fixtureTest } from './fixture.ts'
import type { InspectedRecord } from './record.ts'
import {
  basicUser,
  formPieces,
  isFormBody,
  type LeftOut,
  redactBody,
  redactCredentials,
  redactHeader,
  redactUrl,
  withoutCredentials,
} from './redact.ts'
import { encodedFromEnvironment, fromEnvironment, percentEncodedFromEnvironment, printfBytes, shellBytes, shellQuote } from './shell.ts'

export { printfBytes, shellQuote } from './shell.ts'

/**
 * A delivery as something to keep or run again: a `hookguard send` command, a curl command that
 * posts the exact bytes, a HAR file, and a Vitest fixture. Credentials are never written out, and
 * go through the same redaction as the page ({@link redactUrl}, {@link redactHeader}): commands
 * read each one from an environment variable they name (`HOOKGUARD_SECRET`, `HOOKGUARD_PASSWORD`,
 * `HOOKGUARD_APP_SECRET`, `HOOKGUARD_ACCESS_TOKEN`…) and stop when it is not set; HAR and the
 * fixture carry `[redacted]`, and the fixture's test re-authenticates from the environment.
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

/**
 * The headers a command does not repeat: the framing (curl writes its own), the connection's, and
 * the hop-by-hop ones the app never received (`Proxy-Authorization` among them).
 */
const NOT_SENT = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'expect',
  'accept-encoding',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
])

/** The environment variables a command reads, each with why, written as comments at its top. */
class Needs {
  readonly #variables = new Map<string, string>()

  add(variable: string, why = ''): void {
    if (!this.#variables.has(variable)) this.#variables.set(variable, why)
  }

  get variables(): string[] {
    return [...this.#variables.keys()]
  }

  toString(): string {
    return [...this.#variables]
      .map(([variable, why]) => `# Needs ${variable} in the environment${why === '' ? '' : ` (${why})`}.\n`)
      .join('')
  }
}

/** The export's address: the recorded path and query on `base`, the query's credentials taken out. */
function exportTarget(record: InspectedRecord, base: string): { url: string; leftOut: LeftOut[] } {
  const url = new URL(base)
  const path = record.url.startsWith('/') ? record.url : `/${record.url}`
  const { url: rest, leftOut } = withoutCredentials(path)
  return { url: `${url.origin}${url.pathname.replace(/\/$/, '')}${rest}`, leftOut }
}

const leftOutWhy = ({ name }: LeftOut) => `the query's ${name}, left out here`

/**
 * The command that writes the body: its exact bytes, except a form's credential fields, whose
 * values are read from the environment (percent-encoded), each variable checked first: the lines
 * to run before, and the command.
 */
function bodyWriter(record: InspectedRecord, needs: Needs): { checks: string[]; command: string } {
  const pieces = isFormBody(record.headers) ? formPieces(record.body) : []
  if (pieces.every((piece) => 'text' in piece)) return { checks: [], command: printfBytes(record.body) }
  const checks: string[] = []
  const commands: string[] = []
  for (const piece of pieces) {
    if ('text' in piece) {
      if (piece.text !== '') commands.push(printfBytes(Buffer.from(piece.text, 'latin1')))
      continue
    }
    needs.add(
      piece.variable,
      piece.variable === 'HOOKGUARD_ACCESS_TOKEN' ? 'a fresh one: hookguard token …' : `the form's ${piece.name}, left out here`,
    )
    checks.push(`: ${fromEnvironment(piece.variable)}\n`)
    commands.push(percentEncodedFromEnvironment(piece.variable))
  }
  return { checks, command: `{ ${commands.join('; ')}; }` }
}

/** `hookguard send`, re-authenticated from the environment, the body piped as its exact bytes. */
export function toSendCommand(record: InspectedRecord, context: ExportContext): string {
  const target = exportTarget(record, context.url)
  const needs = new Needs()
  if (record.mode === 'secret') needs.add('HOOKGUARD_SECRET')
  if (record.mode === 'basic') needs.add('HOOKGUARD_PASSWORD')
  if (record.mode === 'oauth2') needs.add('HOOKGUARD_APP_SECRET')
  // A recorded token has expired by the time anyone runs this: in mode oauth2, `send` fetches a new one.
  const leftOut = target.leftOut.filter(({ variable }) => record.mode !== 'oauth2' || variable !== 'HOOKGUARD_ACCESS_TOKEN')
  // `send` takes a URL and no query of its own: each credential goes in it, encoded, from the environment.
  let url = ''
  let text = target.url
  let separator = target.url.includes('?') ? '&' : '?'
  for (const credential of leftOut) {
    url += shellQuote(`${text}${separator}${credential.name}=`) + encodedFromEnvironment(credential.variable)
    needs.add(credential.variable, leftOutWhy(credential))
    text = ''
    separator = '&'
  }
  if (text !== '') url += shellQuote(text)
  const args = [`hookguard send ${url}`, `--mode ${record.mode}`]
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
  // The form's credentials: from the environment too (in mode oauth2, `send` also adds a fresh token to the query).
  const body = bodyWriter(record, needs)
  // The URL's credentials are checked first: `node -p` would write "undefined" for one not set.
  const checks = [...leftOut.map(({ variable }) => `: ${fromEnvironment(variable)}\n`), ...body.checks]
  return `${needs}${[...new Set(checks)].join('')}${body.command} | ${args.join(' ')}\n`
}

/** curl posting the exact bytes (`--data-binary @-` from `printf`), with every end-to-end header as recorded. */
export function toCurl(record: InspectedRecord, context: ExportContext): string {
  const target = exportTarget(record, context.url)
  const needs = new Needs()
  const lines = [`curl -sS -X ${shellQuote(record.method)} ${shellQuote(target.url)}`]
  for (const [name, value] of record.headers) {
    const lower = name.toLowerCase()
    if (NOT_SENT.has(lower)) continue
    if (lower === 'authorization') {
      const [scheme = '', credentials = ''] = value.trim().split(/\s+/, 2)
      if (/^basic$/i.test(scheme)) {
        lines.push(`-u ${shellQuote(`${basicUser(credentials) ?? ''}:`)}${fromEnvironment('HOOKGUARD_PASSWORD')}`)
        needs.add('HOOKGUARD_PASSWORD')
      } else {
        const shown = /^[A-Za-z][A-Za-z0-9._~+-]*$/.test(scheme) ? scheme : 'Bearer'
        lines.push(`-H ${shellQuote(`${name}: ${shown} `)}${fromEnvironment('HOOKGUARD_ACCESS_TOKEN')}`)
        needs.add('HOOKGUARD_ACCESS_TOKEN', 'a fresh one: hookguard token …')
      }
      continue
    }
    if (lower === 'cookie') {
      lines.push(`-H ${shellQuote(`${name}: `)}${fromEnvironment('HOOKGUARD_COOKIE')}`)
      needs.add('HOOKGUARD_COOKIE', 'the Cookie header received, left out here')
      continue
    }
    // Node reads header bytes as latin1: these are the bytes received, whatever their encoding.
    lines.push(`-H ${shellBytes(Buffer.from(`${name}: ${value}`, 'latin1'))}`)
  }
  for (const credential of target.leftOut) {
    // curl encodes the value (`--url-query name=value`); the name stays as written.
    lines.push(`--url-query ${shellQuote(`${credential.name}=`)}${fromEnvironment(credential.variable)}`)
    needs.add(
      credential.variable,
      credential.variable === 'HOOKGUARD_ACCESS_TOKEN' ? 'a fresh one: hookguard token …' : leftOutWhy(credential),
    )
  }
  lines.push('--data-binary @-')
  const body = bodyWriter(record, needs)
  return `${needs}${[...new Set(body.checks)].join('')}${body.command} | ${lines.join(' \\\n  ')}\n`
}

/** A header value as text: Node reads header bytes as latin1; bytes that are UTF-8 are read as UTF-8. */
export function headerText(value: string): string {
  const bytes = Buffer.from(value, 'latin1')
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return value
  }
}

const harHeaders = (headers: readonly [string, string][]) =>
  headers.map(([name, value]) => ({ name, value: headerText(redactHeader(name, value)) }))

/** HAR 1.2 (one entry), credentials replaced as on the page. */
export function toHar(record: InspectedRecord, context: ExportContext): string {
  const base = new URL(context.url)
  const url = `${base.origin}${base.pathname.replace(/\/$/, '')}${redactUrl(record.url.startsWith('/') ? record.url : `/${record.url}`)}`
  // A form's credential fields `[redacted]`, as on the page.
  const body = redactBody(record.headers, record.body)
  const text = new TextDecoder('utf-8', { fatal: false }).decode(body)
  const isText = Buffer.from(text, 'utf8').equals(Buffer.from(body))
  const contentType = record.headers.find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? 'application/octet-stream'
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
            headers: harHeaders(record.headers),
            queryString: [...new URL(url).searchParams].map(([name, value]) => ({ name, value })),
            postData: isText
              ? { mimeType: headerText(contentType), text }
              : { mimeType: headerText(contentType), text: Buffer.from(body).toString('base64'), encoding: 'base64' },
            headersSize: -1,
            bodySize: record.bodyBytes,
          },
          response: {
            status: app?.status ?? record.status,
            statusText: '',
            httpVersion: 'HTTP/1.1',
            cookies: [],
            headers: harHeaders(app?.headers ?? []),
            content: {
              size: app?.body.byteLength ?? 0,
              mimeType: headerText(app?.headers.find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? ''),
              // An app that answers a token request recorded as a delivery (`/token/`) sends a token.
              text: app === undefined ? '' : redactCredentials(new TextDecoder().decode(app.body)),
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
