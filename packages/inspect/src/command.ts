import { parseArgs } from 'node:util'
import { startInspector } from './inspector.ts'
import type { InspectAuth } from './options.ts'
import { DEFAULT_PORT, DEFAULT_UI_PORT, type DeliverFunction } from './options.ts'
import type { InspectedRecord } from './record.ts'
import { pathOnly } from './redact.ts'
import { jsonLine } from './view.ts'

/** Where the command writes and what it reads: `process.*` fit, and so does a test's buffer. */
export interface InspectIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
  env: Readonly<Record<string, string | undefined>>
  /** The command runs until this aborts (Ctrl-C). */
  signal?: AbortSignal
}

export interface InspectCommandDeps {
  /** `deliver` from `@hookguard/emulator`, for edit-and-resend. */
  deliver?: DeliverFunction
}

const OPTIONS = {
  'forward-to': { type: 'string' },
  port: { type: 'string' },
  'ui-port': { type: 'string' },
  mode: { type: 'string' },
  save: { type: 'string' },
  json: { type: 'boolean' },
  host: { type: 'string' },
  secret: { type: 'string' },
  'signature-header': { type: 'string' },
  username: { type: 'string' },
  password: { type: 'string' },
  appid: { type: 'string' },
  'app-secret': { type: 'string' },
  'token-path': { type: 'string' },
  'max-connections': { type: 'string' },
  'max-in-flight-bytes': { type: 'string' },
} as const

const MODES = ['secret', 'basic', 'oauth2', 'none'] as const

/** A mistake on the command line: its message starts with the package's name, which the `hookguard` command shows as a usage error. */
function usage(message: string): never {
  throw new TypeError(`@hookguard/inspect: ${message}`)
}

function portOf(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value) || Number(value) > 65535) usage(`${flag} must be a whole number from 0 to 65535`)
  return Number(value)
}

function countOf(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined
  if (!/^[1-9]\d{0,14}$/.test(value)) usage(`${flag} must be a whole number above 0`)
  return Number(value)
}

/** A secret from its flag or its environment variable (which keeps it out of shell history and process listings). */
function secretOf(value: string | undefined, flag: string, envName: string, env: InspectIo['env']): string {
  const found = value ?? env[envName]
  if (found === undefined || found === '') usage(`${flag} or the ${envName} environment variable is required`)
  return found
}

function authOf(values: Record<string, string | boolean | undefined>, env: InspectIo['env']): InspectAuth {
  const mode = (values.mode as string | undefined) ?? 'secret'
  if (!(MODES as readonly string[]).includes(mode)) usage(`--mode must be one of ${MODES.join(', ')}`)
  switch (mode as (typeof MODES)[number]) {
    case 'secret': {
      // Several, comma-separated, while rotating: each is tried, as the receiver does.
      const secrets = secretOf(values.secret as string | undefined, '--secret', 'HOOKGUARD_SECRET', env)
        .split(',')
        .filter((s) => s !== '')
      return { mode: 'secret', secret: secrets }
    }
    case 'basic': {
      const username = (values.username as string | undefined) ?? env.HOOKGUARD_USERNAME
      if (!username) usage('--username or the HOOKGUARD_USERNAME environment variable is required')
      return { mode: 'basic', username, password: secretOf(values.password as string | undefined, '--password', 'HOOKGUARD_PASSWORD', env) }
    }
    case 'oauth2': {
      const appId = (values.appid as string | undefined) ?? env.HOOKGUARD_APPID
      if (!appId) usage('--appid or the HOOKGUARD_APPID environment variable is required')
      return {
        mode: 'oauth2',
        appId,
        secret: secretOf(values['app-secret'] as string | undefined, '--app-secret', 'HOOKGUARD_APP_SECRET', env),
      }
    }
    case 'none':
      return { mode: 'none' }
  }
}

/**
 * `hookguard inspect`: runs the inspector until `io.signal` aborts. Resolves the exit code: 0
 * when stopped, 1 when a port cannot be taken. Mistakes on the command line throw a `TypeError`
 * whose message starts with `@hookguard/inspect: `.
 */
export async function inspectCommand(args: readonly string[], io: InspectIo, deps: InspectCommandDeps = {}): Promise<number> {
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] }
  try {
    parsed = parseArgs({ args: [...args], options: OPTIONS, allowPositionals: true, strict: true })
  } catch (error) {
    // parseArgs names the option, never the value given.
    usage(String((error as Error).message).split('\n')[0] ?? 'invalid arguments')
  }
  const { values, positionals } = parsed
  if (positionals.length > 0) usage(`expected no arguments besides options, got ${positionals.length}`)
  const json = values.json === true
  const forwardTo = values['forward-to'] as string | undefined
  if (forwardTo !== undefined && (!URL.canParse(forwardTo) || new URL(forwardTo).protocol !== 'http:')) {
    usage('--forward-to must be an http:// URL')
  }
  const host = values.host as string | undefined
  const write = (line: Record<string, unknown>) => io.stdout.write(`${JSON.stringify(line)}\n`)
  const onRecord = (record: InspectedRecord) => {
    if (json) write(jsonLine(record))
    else io.stdout.write(`${describe(record)}\n`)
  }

  let inspector: Awaited<ReturnType<typeof startInspector>>
  try {
    inspector = await startInspector({
      auth: authOf(values, io.env),
      forwardTo,
      port: portOf(values.port as string | undefined, DEFAULT_PORT, '--port'),
      uiPort: portOf(values['ui-port'] as string | undefined, DEFAULT_UI_PORT, '--ui-port'),
      ...(host !== undefined && { host }),
      ...(values.save !== undefined && { save: values.save as string }),
      ...(values['signature-header'] !== undefined && { signatureHeader: values['signature-header'] as string }),
      ...(values['token-path'] !== undefined && { tokenPath: values['token-path'] as string }),
      ...(values['max-connections'] !== undefined && {
        maxConnections: countOf(values['max-connections'] as string, '--max-connections'),
      }),
      ...(values['max-in-flight-bytes'] !== undefined && {
        maxInFlightBytes: countOf(values['max-in-flight-bytes'] as string, '--max-in-flight-bytes'),
      }),
      ...(deps.deliver !== undefined && { deliver: deps.deliver }),
      onRecord,
      onWarning: (message) => io.stderr.write(`${message}\n`),
    })
  } catch (error) {
    if (error instanceof TypeError) throw error
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message
    io.stderr.write(`hookguard: cannot listen: ${code}\n`)
    return 1
  }
  if (host !== undefined && host !== '127.0.0.1' && host !== 'localhost' && host !== '::1') {
    io.stderr.write(
      `hookguard: warning: listening on ${host}: anyone who can reach it and learns the access token sees every delivery recorded.\n`,
    )
  }
  if (json) write({ type: 'ready', receive: inspector.receiveUrl, ui: inspector.uiUrl })
  else {
    io.stdout.write(
      forwardTo === undefined
        ? `Receiving on ${inspector.receiveUrl}/ and answering as hookguard would.\n`
        : `Receiving on ${inspector.receiveUrl}/ and forwarding to ${forwardTo}.\n`,
    )
    io.stdout.write(`Inspector: ${inspector.uiUrl}\nCtrl-C to stop.\n`)
  }

  await new Promise<void>((resolve) => {
    if (io.signal === undefined) return
    if (io.signal.aborted) resolve()
    else io.signal.addEventListener('abort', () => resolve(), { once: true })
  })
  await inspector.close()
  if (!json) io.stdout.write('Stopped.\n')
  return 0
}

/** One log line: codes and statuses, the path without its query (a token may be in it), never a body. */
function describe(record: InspectedRecord): string {
  const path = pathOnly(record.url)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters (terminal escapes) is the point
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '\uFFFD')
    .slice(0, 120)
  const parts = [record.kind === 'token' ? 'token   ' : record.verdict === 'verified' ? 'verified' : 'refused ', `${record.method} ${path}`]
  if (record.code !== undefined) parts.push(record.code)
  if (record.hint !== undefined) parts.push(`hint ${record.hint}`)
  if (record.app?.status !== undefined) parts.push(`app ${record.app.status}`)
  if (record.app?.error !== undefined) parts.push(`app ${record.app.error}`)
  if (record.disagreement !== undefined) parts.push(`DISAGREEMENT ${record.disagreement}`)
  // Header names are tokens (no control character): safe on a terminal as they are.
  if (record.notForwarded !== undefined) parts.push(`not forwarded (named in Connection): ${record.notForwarded.join(', ')}`)
  if (record.annotationFailed !== undefined) parts.push('some notes failed')
  return parts.join('  ')
}
