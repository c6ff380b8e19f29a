import { type ParseArgsConfig, parseArgs } from 'node:util'
import { DEFAULT_SIGNATURE_HEADER } from '@hookguard/core'
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_IN_FLIGHT_BYTES, DEFAULT_TOKEN_PATH } from './defaults.ts'

// The command-line options of the two commands that receive deliveries, `hookguard listen` and
// `hookguard inspect`, declared once: their names, values, environment variables, help and checks.
// It lives here, below the emulator (which owns the `hookguard` command and depends on this
// package), so that both commands read it without a circle, and it imports no server: the
// emulator loads it for `listen` without loading the inspector.

export const MODES = ['secret', 'basic', 'oauth2', 'none'] as const
export type Mode = (typeof MODES)[number]

/** One option of a command line. */
export interface OptionSpec {
  /** `string` takes a value; `boolean` is a switch. */
  type: 'string' | 'boolean'
  short?: string
  /** The value's placeholder in the help (`<n>`). */
  value?: string
  /**
   * Read when the flag is absent. Credentials belong there: a flag's value ends up in shell
   * history and in the process list.
   */
  env?: string
  /** The mode the option belongs to: the help lists it under that mode. */
  mode?: Mode
  /** What the help says, without its default or its variable (both are added from here). */
  help: string
  /** Used when neither the flag nor its variable is given; shown in the help, so never a credential. */
  default?: string
  /** Refused when absent and without a default. */
  required?: boolean
  /** Why the value is refused, or `undefined`. Never quotes the value: it may be a secret. */
  check?: (value: string) => string | undefined
}

export type OptionTable = Readonly<Record<string, OptionSpec>>

/** What a command's options hold once read: the flag's value, else its variable's, else the default. */
export type OptionValues = Readonly<Record<string, string | boolean | undefined>>

/** For ports: 0 asks the system for a free one. */
export const checkPort = (value: string) =>
  /^\d{1,5}$/.test(value) && Number(value) <= 65535 ? undefined : 'must be a whole number from 0 to 65535'

/** For counts and sizes: a whole number from 1 to `max`, in plain digits. */
export const checkCount = (max: number) => (value: string) =>
  /^[1-9]\d{0,15}$/.test(value) && Number(value) <= max ? undefined : `must be a whole number from 1 to ${max}`

/** More connections than a process opens files for, by far: past it, a value removes the bound rather than sets it. */
export const MAX_CONNECTIONS_FLAG = 65_536
/** 1 TiB. */
export const MAX_IN_FLIGHT_BYTES_FLAG = 2 ** 40

/** Shorter entries in a list are taken for the pieces of one secret that holds a comma. */
export const MIN_LISTED_SECRET = 8

/** The longest `--token-path`: an address, not a place to hide data. */
export const MAX_TOKEN_PATH = 256

// RFC 3986 segments of pchar without `%`-escapes: every server reads such a path the same way,
// so `listen` and `inspect` serve the token at the same address, the one printed.
const TOKEN_PATH = /^(?:\/[A-Za-z0-9\-._~!$&'()*+,;=:@]+)+$/

/** For `--token-path`: refused unless every reader of a request sees this exact path. */
export const checkTokenPath = (value: string) =>
  value.length <= MAX_TOKEN_PATH && TOKEN_PATH.test(value) && !value.split('/').some((segment) => segment === '.' || segment === '..')
    ? undefined
    : `must be an absolute path of at most ${MAX_TOKEN_PATH} characters: segments of letters, digits and -._~!$&'()*+,;=:@, each after one /, none . or .., no %, ? or #`

// RFC 9110 token: anything else cannot be a header name, so no request could carry the signature.
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** For header names (`--signature-header`). */
export const checkHeaderName = (value: string) =>
  FIELD_NAME.test(value) ? undefined : "must be an HTTP header name: letters, digits and !#$%&'*+-.^_`|~"

/**
 * The options `listen` and `inspect` share: what a receiver needs to verify as the user's app
 * does. A command sets its own defaults with {@link withDefaults}.
 */
export const RECEIVER_OPTIONS = {
  mode: {
    type: 'string',
    value: '<mode>',
    required: true,
    help: `The authentication mode your app uses: ${MODES.join(', ')}`,
    check: (value) => ((MODES as readonly string[]).includes(value) ? undefined : `must be one of ${MODES.join(', ')}`),
  },
  port: { type: 'string', value: '<n>', help: 'Where deliveries are received; 0 picks a free port', check: checkPort },
  secret: {
    type: 'string',
    value: '<s>',
    env: 'HOOKGUARD_SECRET',
    mode: 'secret',
    // Both commands are receivers, and a receiver takes several secrets while one is rotated out.
    help: `The signing secret; several, comma-separated, while rotating (each ${MIN_LISTED_SECRET} characters or more; a secret holding a comma cannot be given as a list)`,
  },
  'signature-header': {
    type: 'string',
    value: '<name>',
    mode: 'secret',
    help: 'The header the signature travels in',
    default: DEFAULT_SIGNATURE_HEADER,
    check: checkHeaderName,
  },
  username: { type: 'string', value: '<u>', env: 'HOOKGUARD_USERNAME', mode: 'basic', help: 'The user name' },
  password: { type: 'string', value: '<p>', env: 'HOOKGUARD_PASSWORD', mode: 'basic', help: 'The password' },
  appid: { type: 'string', value: '<id>', env: 'HOOKGUARD_APPID', mode: 'oauth2', help: 'The app id' },
  'app-secret': { type: 'string', value: '<s>', env: 'HOOKGUARD_APP_SECRET', mode: 'oauth2', help: 'The app secret' },
  'token-path': {
    type: 'string',
    value: '<path>',
    mode: 'oauth2',
    help: 'Where the token acquisition address is, on any delivery path',
    default: DEFAULT_TOKEN_PATH,
    check: checkTokenPath,
  },
} as const satisfies OptionTable

/**
 * What a receiving command takes in at once, in both commands: without a bound, senders that never
 * finish their bodies (or keep opening connections) would grow its memory until it ends.
 */
export const ADMISSION_OPTIONS = {
  'max-connections': {
    type: 'string',
    value: '<n>',
    help: 'Connections served at once; past it, 503',
    default: String(DEFAULT_MAX_CONNECTIONS),
    check: checkCount(MAX_CONNECTIONS_FLAG),
  },
  'max-in-flight-bytes': {
    type: 'string',
    value: '<n>',
    help: 'Bytes of bodies held at once; past it, 503',
    default: String(DEFAULT_MAX_IN_FLIGHT_BYTES),
    check: checkCount(MAX_IN_FLIGHT_BYTES_FLAG),
  },
} as const satisfies OptionTable

export interface AdmissionSettings {
  maxConnections: number
  maxInFlightBytes: number
}

/**
 * The bounds from options read over a table that holds {@link ADMISSION_OPTIONS}. The bytes in
 * flight must hold one body of the size limit: checked here, so that the message names the flag.
 */
export function admissionSettings(values: OptionValues, maxBodySize: number): AdmissionSettings {
  const settings = { maxConnections: Number(values['max-connections']), maxInFlightBytes: Number(values['max-in-flight-bytes']) }
  if (settings.maxInFlightBytes <= maxBodySize)
    usage(`--max-in-flight-bytes must be over the size limit (${maxBodySize} bytes): a body of that size must fit`)
  return settings
}

/** `table` with other defaults (a command's own port, its default mode). */
export function withDefaults<T extends OptionTable>(table: T, defaults: { readonly [Name in keyof T]?: string }): T {
  const out: Record<string, OptionSpec> = { ...table }
  for (const [name, value] of Object.entries(defaults)) {
    const spec = out[name]
    if (spec !== undefined && value !== undefined) out[name] = { ...spec, default: value }
  }
  return out as T
}

/** A mistake on the command line: `hookguard` shows it as a usage error (exit code 2) with a pointer to the command's help. */
export function usage(message: string): never {
  throw new TypeError(`@hookguard/inspect: ${message}`)
}

/**
 * `parseArgs`, strict, with positionals left to the caller. Its messages name the option, never
 * the value given, so they are safe to show even when the value was a secret.
 */
export function parseCommandLine(
  args: readonly string[],
  options: NonNullable<ParseArgsConfig['options']>,
): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true }) as ReturnType<typeof parseCommandLine>
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') usage(unknownOption(error as Error, options))
    // Its advice on a value that starts with a dash is on a line of its own, after the first.
    if ((error as Error).message.includes('argument is ambiguous'))
      usage(`${String((error as Error).message).split('\n')[0]} A value that starts with a dash is given as --name=value.`)
    // Its advice on positionals starting with '-' is about a command that takes them as data.
    usage(
      String((error as Error).message)
        .split('\n')[0]
        ?.replace(/\. To specify a positional.*$/, '') ?? 'invalid arguments',
    )
  }
}

/**
 * An unknown option, named no further than what looks like an option's name: a secret glued to
 * its flag (`--secret:…`, `--secret—…`, `--secret…`) would otherwise be printed whole.
 */
function unknownOption(error: Error, options: NonNullable<ParseArgsConfig['options']>): string {
  const given = /^Unknown option '(.*?)'\. To specify/s.exec(error.message)?.[1] ?? ''
  let name = /^--?[A-Za-z0-9-]*/.exec(given)?.[0] ?? ''
  if (name.startsWith('--')) {
    // The longest known name it starts with: what follows is what was glued to the flag.
    const known = [...Object.keys(options), ...Object.keys(RECEIVER_OPTIONS)]
      .filter((option) => name.startsWith(`--${option}`))
      .sort((a, b) => b.length - a.length)[0]
    if (known !== undefined) name = `--${known}`
  }
  if (name === '-' || name === '--') return 'Unknown option (not shown: it may be a secret)'
  return name === given ? `Unknown option '${name}'` : `Unknown option '${name}' followed by more (not shown: it may be a secret)`
}

/**
 * Reads a command line against `table`: strict (an unknown option, a missing value and any
 * argument besides the options are refused), then each option from its flag, else its environment
 * variable, else its default, and checked. Messages name the option and the variable, never a
 * value: a mistyped flag can leave a secret where a name was expected.
 */
export function readOptions(args: readonly string[], table: OptionTable, env: Readonly<Record<string, string | undefined>>): OptionValues {
  const { values, positionals } = parseCommandLine(
    args,
    Object.fromEntries(Object.entries(table).map(([name, { type, short }]) => [name, short === undefined ? { type } : { type, short }])),
  )
  // Not quoted: a mistyped flag can leave a secret among them.
  if (positionals.length > 0) usage(`expected no arguments besides options, got ${positionals.length}`)
  const read: Record<string, string | boolean | undefined> = {}
  for (const [name, spec] of Object.entries(table)) {
    const value = values[name] ?? (spec.env === undefined ? undefined : env[spec.env]) ?? spec.default
    if (value === undefined && spec.required) missing(name, spec)
    if (typeof value === 'string') {
      const problem = spec.check?.(value)
      if (problem !== undefined) usage(`--${name} ${problem}`)
    }
    read[name] = value
  }
  return read
}

/** The credentials a receiver checks: what `@hookguard/core`'s `WebhookAuth` and the inspector's `InspectAuth` both take. */
export type ReceiverAuth =
  | { mode: 'secret'; secret: string[] }
  | { mode: 'basic'; username: string; password: string }
  | { mode: 'oauth2'; appId: string; secret: string }
  | { mode: 'none' }

/** The shared options, read: the same for `listen` and `inspect` given the same command line and environment. */
export interface ReceiverSettings {
  auth: ReceiverAuth
  port: number
  signatureHeader: string
  tokenPath: string
}

/** The receiver's settings from options read with {@link readOptions} over a table that holds {@link RECEIVER_OPTIONS}. */
export function receiverSettings(values: OptionValues): ReceiverSettings {
  return {
    auth: authFor(values.mode as Mode, values),
    port: Number(values.port),
    signatureHeader: values['signature-header'] as string,
    tokenPath: values['token-path'] as string,
  }
}

function authFor(mode: Mode, values: OptionValues): ReceiverAuth {
  switch (mode) {
    case 'secret':
      return { mode, secret: secretList(present(values, 'secret')) }
    case 'basic':
      return { mode, username: present(values, 'username'), password: present(values, 'password') }
    case 'oauth2':
      return { mode, appId: present(values, 'appid'), secret: present(values, 'app-secret') }
    case 'none':
      return { mode }
  }
}

/**
 * `--secret` as every command reads it: several, comma-separated, while one is rotated out, each
 * without the spaces and tabs typed around it. A list with a short entry is refused: it is more
 * likely one secret holding a comma, and a fragment of it would verify on its own.
 */
function secretList(value: string): string[] {
  const secrets = value
    .split(',')
    .map((secret) => secret.replace(/^[ \t]+|[ \t]+$/g, ''))
    .filter((secret) => secret !== '')
  if (secrets.length === 0) missing('secret', RECEIVER_OPTIONS.secret)
  if (secrets.length > 1 && secrets.some((secret) => secret.length < MIN_LISTED_SECRET)) {
    usage(
      `--secret or ${RECEIVER_OPTIONS.secret.env}: a list entry is shorter than ${MIN_LISTED_SECRET} characters; a secret holding a comma cannot be given as a list`,
    )
  }
  return secrets
}

/**
 * The secret a command that signs (`sign`, `send`) signs with: the first of the list, the current
 * one, as the service signs with one. The same `HOOKGUARD_SECRET` then serves a receiver that
 * tries each and a sender that signs as the newest.
 */
export function signingSecret(value: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
  return secretList(credential(value, 'secret', env))[0] as string
}

/** A credential's value; an empty one is missing, so that an unset variable never opens a receiver. */
function present(values: OptionValues, name: keyof typeof RECEIVER_OPTIONS): string {
  const value = values[name]
  if (typeof value !== 'string' || value === '') missing(name, RECEIVER_OPTIONS[name])
  return value
}

function missing(name: string, { env }: OptionSpec): never {
  usage(env === undefined ? `--${name} is required` : `--${name} or the ${env} environment variable is required`)
}

/** The receiver's options that have an environment variable: the credentials. */
export type CredentialOption = {
  [Name in keyof typeof RECEIVER_OPTIONS]: (typeof RECEIVER_OPTIONS)[Name] extends { env: string } ? Name : never
}[keyof typeof RECEIVER_OPTIONS]

/**
 * A credential from its flag or, failing that, the variable this table names for it: for the
 * commands that send (`sign`, `send`, `token`), so that every command reads the same variables.
 */
export function credential(value: string | undefined, name: CredentialOption, env: Readonly<Record<string, string | undefined>>): string {
  const spec: OptionSpec = RECEIVER_OPTIONS[name]
  return present({ [name]: value ?? env[spec.env as string] }, name)
}

/** What the help of a command says around its options. */
export interface HelpText {
  /** After `Usage: `. */
  usage: string
  /** What the command does, as paragraphs. */
  about: string
  /** The command's options: {@link RECEIVER_OPTIONS} first, then its own. */
  options: OptionTable
  /** After the options: notes and examples. */
  footer: string
}

const HELP_FLAG: OptionSpec = { type: 'boolean', short: 'h', help: 'Show this help' }

/**
 * A command's help, from its table, so that it lists every option the command takes, and only
 * those. Variables are named, never read: a credential in the environment never reaches the help.
 */
export function helpText({ usage, about, options, footer }: HelpText): string {
  const entries = [...Object.entries(options), ['help', HELP_FLAG] as const]
  const flag = (name: string, spec: OptionSpec) =>
    `${spec.short === undefined ? '' : `-${spec.short}, `}--${name}${spec.value === undefined ? '' : ` ${spec.value}`}`
  const width = Math.max(...entries.map(([name, spec]) => flag(name, spec).length)) + 2
  const line = ([name, spec]: readonly [string, OptionSpec]) => {
    const notes = [
      spec.env === undefined ? '' : ` (default: $${spec.env})`,
      spec.default !== undefined ? ` (default: ${spec.default})` : spec.required ? ' (required)' : '',
    ]
    return `  ${flag(name, spec).padEnd(width)}${spec.help}${notes.join('')}\n`
  }
  const general = entries.filter(([, spec]) => spec.mode === undefined)
  const perMode = MODES.map((mode) => [mode, entries.filter(([, spec]) => spec.mode === mode)] as const).filter(
    ([, list]) => list.length > 0,
  )
  return [
    `Usage: ${usage}\n\n${about}\n`,
    `Options:\n${general.map(line).join('')}`,
    ...perMode.map(([mode, list]) => `Mode ${mode}:\n${list.map(line).join('')}`),
    footer,
  ].join('\n')
}
