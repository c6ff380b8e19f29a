import { DEFAULT_SIGNATURE_HEADER } from '@hookguard/core'
import type { ExportContext } from './export-context.ts'
import { fixtureJson, fixtureName, fixtureTest } from './fixture.ts'
import type { InspectedRecord } from './record.ts'
import {
  basicUser,
  type credentialVariable,
  decodeName,
  formPieces,
  isCredentialHeader,
  isCredentialName,
  isFormBody,
  type LeftOut,
  redactBody,
  redactCredentials,
  redactHeader,
  redactUrl,
  SENT_PREFIX,
  sentVariable,
} from './redact.ts'
import { commentWord, fromEnvironment, percentEncodedWord, printfBytes, shellBytes, shellQuote } from './shell.ts'

export { printfBytes, shellQuote } from './shell.ts'

/**
 * A delivery as something to keep or run again: a curl command that sends the recorded request
 * byte for byte, a `hookguard send` command, a HAR file, and a Vitest fixture. What a request held
 * is data in every one of them: in a script each byte of it is one quoted shell word, comments
 * included, and what a script cannot repeat it says at its top. Credentials are never written
 * out, and go through the same redaction as the page ({@link redactUrl}, {@link redactHeader}):
 * commands read each one from an environment variable they name and stop when it is not set;
 * names a sender chose map under `HOOKGUARD_SENT_` ({@link credentialVariable}), never onto
 * hookguard's own variables. HAR and the fixture carry `[redacted]`, and the fixture's test
 * re-authenticates from the environment.
 */

export type ExportFormat = 'send' | 'curl' | 'har' | 'fixture' | 'fixture-test'

/** Where a credential was: a header by its name, a query's or form's field by its name as a quoted word. */
type CredentialPlace = `${'header' | 'query' | 'form'} ${string}`

/** The environment variables a command reads, each with why, written as comments at its top. */
class Needs {
  readonly #variables = new Map<string, string>()

  add(variable: string, why = ''): void {
    if (!this.#variables.has(variable)) this.#variables.set(variable, why)
  }

  /**
   * A credential read from `variable`; `false` when an earlier one read the same variable under a
   * sender's name. Names alike in capitals (`X-Secret`, `x_secret`), or one name twice, map to one
   * variable, so every credential after the first sends the first one's value where the recording
   * may hold another. hookguard's own variables (a fresh token, the app secret) are not replays of
   * a recorded value, and are meant to be read wherever the recording had one.
   */
  credential(variable: string, why: string): boolean {
    // A sender's variable enters only through here, so one already needed was read by an earlier credential.
    const first = !this.#variables.has(variable)
    this.add(variable, why)
    return first || !variable.startsWith(SENT_PREFIX)
  }

  toString(): string {
    return [...this.#variables]
      .map(([variable, why]) => `# Needs ${variable} in the environment${why === '' ? '' : ` (${why})`}.\n`)
      .join('')
  }
}

/**
 * What running a command sends that the recording did not have, one comment line each, in a form
 * a reader (and the export's property test) can rely on: `# Differs from the recording: <what>: <why>`.
 */
class Differs {
  readonly #lines: string[] = []

  add(what: 'method' | 'target' | 'headers' | 'body' | CredentialPlace, why: string): void {
    this.#lines.push(`# Differs from the recording: ${what}: ${why}.\n`)
  }

  toString(): string {
    return this.#lines.join('')
  }
}

/** Reads a credential from `variable`; one that sends an earlier credential's value (see {@link Needs.credential}) is said to differ. */
function readCredential(needs: Needs, differs: Differs, variable: string, why: string, where: CredentialPlace): void {
  if (!needs.credential(variable, why))
    differs.add(where, `its value is read from ${variable}, as an earlier credential's of a name alike is`)
}

/**
 * A credential's variable. Names the sender chose map under `HOOKGUARD_SENT_` ({@link credentialVariable});
 * a token request's `secret` is the app secret, and reads `HOOKGUARD_APP_SECRET`: it goes back to
 * the token address it was sent to, which is what that secret is for.
 */
function variableOf(record: InspectedRecord, credential: LeftOut): string {
  if (record.kind === 'token' && decodeName(credential.name) === 'secret') return 'HOOKGUARD_APP_SECRET'
  return credential.variable
}

/** Why a command needs a credential's variable: the name as a quoted word ({@link commentWord}), never as it was sent. */
function credentialWhy(variable: string, where: string, name: string): string {
  if (variable === 'HOOKGUARD_ACCESS_TOKEN') return 'a fresh one: hookguard token …'
  if (variable === 'HOOKGUARD_APP_SECRET') return 'the app secret, for the token address'
  return `${where} ${commentWord(name)}, left out here`
}

/**
 * The request target as one shell word: the base address's path, then the path and query as
 * recorded, byte for byte, each credential's value read from the environment in its place
 * (percent-encoded). `drop` leaves out a parameter entirely (with its `&`).
 */
function targetWord(
  record: InspectedRecord,
  prefix: string,
  needs: Needs,
  differs: Differs,
  checks: string[],
  drop: (name: string) => boolean = () => false,
): { word: string; text: string } {
  const path = record.url.startsWith('/') || (record.url === '*' && prefix === '') ? record.url : `/${record.url}`
  const at = path.indexOf('?')
  const query = at < 0 ? undefined : path.slice(at + 1)
  let word = ''
  // The target with each credential's value left empty: what `send`'s URL parsing is checked against.
  let text = `${prefix}${at < 0 ? path : path.slice(0, at + 1)}`
  let literal = text
  if (query !== undefined) {
    const kept = query.split('&').filter((part) => {
      const name = part.indexOf('=') < 0 ? part : part.slice(0, part.indexOf('='))
      return !(isCredentialName(name) && drop(name))
    })
    if (kept.length === 0 && at >= 0) {
      literal = literal.slice(0, -1)
      text = text.slice(0, -1)
    }
    for (const piece of formPieces(Buffer.from(kept.join('&'), 'latin1'))) {
      if ('text' in piece) {
        literal += piece.text
        text += piece.text
        continue
      }
      const variable = variableOf(record, piece)
      readCredential(needs, differs, variable, credentialWhy(variable, "the query's", piece.name), `query ${commentWord(piece.name)}`)
      checks.push(`: ${fromEnvironment(variable)}\n`)
      word += shellQuote(literal) + percentEncodedWord(variable)
      literal = ''
    }
  }
  if (literal !== '' || word === '') word += shellQuote(literal)
  return { word, text }
}

/**
 * The command that writes the body: its exact bytes, except a form's credential fields, whose
 * values are read from the environment (percent-encoded), each variable checked first: the lines
 * to run before, and the command; `exact` when the bytes written are the bytes recorded.
 */
function bodyWriter(record: InspectedRecord, needs: Needs, differs: Differs, checks: string[]): { command: string; exact: boolean } {
  const pieces = isFormBody(record.headers) ? formPieces(record.body) : []
  if (pieces.every((piece) => 'text' in piece)) return { command: printfBytes(record.body), exact: true }
  const commands: string[] = []
  for (const piece of pieces) {
    if ('text' in piece) {
      if (piece.text !== '') commands.push(printfBytes(Buffer.from(piece.text, 'latin1')))
      continue
    }
    const variable = variableOf(record, piece)
    readCredential(needs, differs, variable, credentialWhy(variable, "the form's", piece.name), `form ${commentWord(piece.name)}`)
    // Encoded once, before the body is written, however many fields read it: a form of a
    // mebibyte can hold a hundred thousand credential fields, each otherwise a pipe of four tools.
    const encoded = `hookguard_encoded_${variable}`
    checks.push(`: ${fromEnvironment(variable)}\n`, `${encoded}=${percentEncodedWord(variable)}\n`)
    commands.push(`printf '%s' "$${encoded}"`)
  }
  return { command: `{ ${commands.join('; ')}; }`, exact: false }
}

/** The body was cut at the inspector's size limit: the command sends what was kept. */
function truncated(record: InspectedRecord, differs: Differs): void {
  if (record.bodyBytes > record.body.byteLength) {
    differs.add('body', `cut at the inspector's size limit, ${record.body.byteLength} of ${record.bodyBytes} bytes are sent`)
  }
}

/** The base address's origin and its path, without a trailing `/`: the recorded target goes after it. */
function baseOf(context: ExportContext): { origin: string; prefix: string; host: string } {
  const url = new URL(context.url)
  return { origin: url.origin, prefix: url.pathname.replace(/\/$/, ''), host: url.host }
}

const CREDENTIAL_NOTE = 'credentials are read from the environment (the Needs lines), a query or form value percent-encoded'

/**
 * `hookguard send`, re-authenticated from the environment, the body piped as its exact bytes.
 * `send` makes a delivery as the service does: its own method, headers and URL parsing, each
 * difference from the recording said at the top.
 */
export function toSendCommand(record: InspectedRecord, context: ExportContext): string {
  const base = baseOf(context)
  const needs = new Needs()
  const differs = new Differs()
  const checks: string[] = []
  if (record.mode === 'secret') needs.add('HOOKGUARD_SECRET')
  if (record.mode === 'basic') needs.add('HOOKGUARD_PASSWORD')
  if (record.mode === 'oauth2') needs.add('HOOKGUARD_APP_SECRET')
  // A recorded token has expired by the time anyone runs this: in mode oauth2, `send` fetches a new one.
  const isToken = (name: string) => record.mode === 'oauth2' && decodeName(name) === 'access_token'
  const target = targetWord(record, base.prefix, needs, differs, checks, isToken)
  // As `hookguard send` reads its argument: the target after the origin, never a URL of its own
  // (a path of `//host` is a path there, not another host).
  const parsed = URL.canParse(`${base.origin}${target.text}`) ? new URL(`${base.origin}${target.text}`) : undefined
  if (parsed === undefined) differs.add('target', 'hookguard send cannot parse it as a URL, and stops without sending')
  else if (record.mode === 'oauth2')
    differs.add('target', 'hookguard send adds a fresh access_token to the query, written again in its own form')
  else if (`${parsed.pathname}${parsed.search}` !== target.text) {
    differs.add(
      'target',
      'hookguard send takes a URL, which it parses (encoding some bytes, resolving . and .. segments, dropping a fragment)',
    )
  }
  if (record.method !== 'POST') differs.add('method', `hookguard send POSTs, the recording was ${commentWord(record.method)}`)
  differs.add('headers', "hookguard send writes its own (Content-Type: application/json; charset=utf-8, and the mode's credentials)")
  truncated(record, differs)
  const args = [`hookguard send ${shellQuote(base.origin)}${target.word}`, `--mode ${record.mode}`]
  if (record.mode === 'secret') {
    const header = context.signatureHeader ?? DEFAULT_SIGNATURE_HEADER
    if (header.toLowerCase() !== DEFAULT_SIGNATURE_HEADER.toLowerCase()) args.push(`--signature-header ${shellQuote(header)}`)
  }
  if (record.mode === 'basic') args.push(`--username ${shellQuote(context.username ?? '')}`)
  if (record.mode === 'oauth2') {
    const tokenUrl = `${base.origin}${context.tokenPath ?? '/token'}`
    args.push(`--token-url ${shellQuote(tokenUrl)}`, `--appid ${shellQuote(context.appId ?? '')}`)
  }
  args.push('--file -')
  const body = bodyWriter(record, needs, differs, checks)
  if (!body.exact) differs.add('body', CREDENTIAL_NOTE)
  return `${needs}${differs}${[...new Set(checks)].join('')}${body.command} | ${args.join(' ')}\n`
}

/** A header as one curl argument: `Name: value`, or `Name;` for an empty value (curl drops `Name:`). */
const headerArg = (name: string, value: string) =>
  `-H ${shellBytes(Buffer.from(value === '' ? `${name};` : `${name}: ${value}`, 'latin1'))}`

/** The headers curl writes of its own accord, each removed (`-H 'Name:'`) when the recording had none. */
const CURL_OWN = ['Accept', 'User-Agent']
/** The ones it writes when it sends a body. */
const CURL_OWN_WITH_BODY = ['Content-Type', 'Expect']

/** Basic credentials exactly as curl's `-u user:password` writes them, so that `-u` sends the recorded header. */
function curlBasic(name: string, value: string): string | undefined {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(value)
  if (name !== 'Authorization' || match === null) return undefined
  const bytes = Buffer.from(match[1] as string, 'base64')
  if (bytes.toString('base64') !== match[1]) return undefined
  let decoded: string
  try {
    decoded = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return undefined
  }
  const colon = decoded.indexOf(':')
  return colon < 0 ? undefined : decoded.slice(0, colon)
}

/**
 * curl sending the recorded request: its method, its target byte for byte (`--request-target`,
 * no globbing, no normalising), every header as recorded in its order (curl's own removed), the
 * body's exact bytes from `printf`. What it cannot repeat is said at the top.
 */
export function toCurl(record: InspectedRecord, context: ExportContext): string {
  const base = baseOf(context)
  const needs = new Needs()
  const differs = new Differs()
  const checks: string[] = []
  const target = targetWord(record, base.prefix, needs, differs, checks)
  const has = (name: string) => record.headers.some(([recorded]) => recorded.toLowerCase() === name.toLowerCase())
  const framed = has('content-length') || has('transfer-encoding')
  const withBody = framed || record.body.byteLength > 0
  const body = withBody ? bodyWriter(record, needs, differs, checks) : undefined
  const exactBody = body?.exact === true && record.bodyBytes === record.body.byteLength
  const method = record.method === 'HEAD' && !withBody ? '--head' : `-X ${shellQuote(record.method)}`
  const lines = [`curl -sS --globoff --path-as-is ${method} ${shellQuote(base.origin)}`, `--request-target ${target.word}`]
  for (const own of [...CURL_OWN, ...(withBody ? CURL_OWN_WITH_BODY : [])]) if (!has(own)) lines.push(`-H ${shellQuote(`${own}:`)}`)
  for (const [name, value] of record.headers) {
    const lower = name.toLowerCase()
    if (lower === 'host') {
      if (value !== base.host) differs.add('header Host', 'curl writes the address it sends to')
      continue
    }
    if (lower === 'proxy-authorization') {
      differs.add('header Proxy-Authorization', "left out: a proxy's credential, which the app never received")
      continue
    }
    // curl counts the bytes it sends: the recorded length goes in its place only when those are the bytes recorded.
    if (lower === 'content-length' && !exactBody) {
      if (body?.exact !== false) truncated(record, differs)
      continue
    }
    if (isCredentialHeader(lower) && value !== '') {
      lines.push(credentialHeader(name, value, needs, differs, checks))
      continue
    }
    lines.push(headerArg(name, value))
  }
  if (body !== undefined && !body.exact) differs.add('body', CREDENTIAL_NOTE)
  if (!has('content-length') && !exactBody) truncated(record, differs)
  if (withBody) lines.push('--data-binary @-')
  const command = lines.join(' \\\n  ')
  return `${needs}${differs}${[...new Set(checks)].join('')}${body === undefined ? command : `${body.command} | ${command}`}\n`
}

/** A credential header (`Authorization`, `Cookie`, `X-Api-Key`…), its value read from the environment: never written into the command. */
function credentialHeader(name: string, value: string, needs: Needs, differs: Differs, checks: string[]): string {
  const read = (variable: string, why = '') => {
    needs.add(variable, why)
    checks.push(`: ${fromEnvironment(variable)}\n`)
    return fromEnvironment(variable)
  }
  const sent = (variable: string, why: string) => {
    readCredential(needs, differs, variable, why, `header ${name}`)
    return read(variable)
  }
  if (name.toLowerCase() !== 'authorization') {
    // Cookies and headers such as X-Api-Key: under the sender's namespace, as a query's credentials are.
    return `-H ${shellBytes(Buffer.from(`${name}: `, 'latin1'))}${sent(sentVariable(name), 'a credential header received, left out here')}`
  }
  const user = curlBasic(name, value)
  if (user !== undefined) return `-u ${shellQuote(`${user}:`)}${read('HOOKGUARD_PASSWORD')}`
  const named = /^basic /i.test(value) ? basicUser(value.slice(6).trim()) : undefined
  if (named !== undefined && !named.includes('\ufffd')) {
    differs.add('header Authorization', 'curl writes it from the user name and HOOKGUARD_PASSWORD, in its own form')
    return `-u ${shellQuote(`${named}:`)}${read('HOOKGUARD_PASSWORD')}`
  }
  const bearer = /^bearer /i.exec(value)
  if (bearer !== null) {
    return `-H ${shellBytes(Buffer.from(`${name}: ${bearer[0]}`, 'latin1'))}${read('HOOKGUARD_ACCESS_TOKEN', 'a fresh one: hookguard token …')}`
  }
  return `-H ${shellBytes(Buffer.from(`${name}: `, 'latin1'))}${sent(`${SENT_PREFIX}AUTHORIZATION`, 'the Authorization header received, left out here')}`
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
