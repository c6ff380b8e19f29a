import {
  ADMISSION_OPTIONS,
  type AdmissionSettings,
  INSPECT_OPTIONS,
  inspectSettings,
  type OptionTable,
  RECEIVER_OPTIONS,
  type ReceiverSettings,
} from '@hookguard/inspect/cli'
import { describe, expect, it } from 'vitest'
import { LISTEN_OPTIONS, listenSettings } from '../src/cli/commands/listen.ts'
import { run } from '../src/cli/run.ts'
import { captureIo } from './helpers.ts'

// `hookguard listen` and `hookguard inspect` take the receiver's options, and the bounds on what it
// takes in at once, from one table each: given the
// same command line and environment, both read the same settings, refuse the same mistakes in the
// same words, and list every option in their help.

type Env = Record<string, string>
type Settings = ReceiverSettings & AdmissionSettings
type Case = { args: string[]; env: Env; expected: Settings }
/** The options of both tables. */
const SHARED: OptionTable = { ...RECEIVER_OPTIONS, ...ADMISSION_OPTIONS }

const HEADER = 'X-Service-Hmac-Signature'
const settings = (auth: ReceiverSettings['auth'], others: Partial<Settings> = {}): Settings => ({
  auth,
  port: 0,
  signatureHeader: HEADER,
  tokenPath: '/token',
  maxConnections: 128,
  maxInFlightBytes: 32 * 1024 * 1024,
  ...others,
})

// `--port 0` in every case: each command has its own default port, the one thing they differ in.
const CASES: Case[] = [
  { args: ['--mode', 'none'], env: {}, expected: settings({ mode: 'none' }) },
  {
    args: ['--mode', 'none', '--max-connections', '7', '--max-in-flight-bytes', '2000000'],
    env: {},
    expected: settings({ mode: 'none' }, { maxConnections: 7, maxInFlightBytes: 2_000_000 }),
  },
  { args: ['--mode', 'secret', '--secret', 's-1'], env: {}, expected: settings({ mode: 'secret', secret: ['s-1'] }) },
  {
    args: ['--mode', 'secret', '--signature-header', 'X-Sig'],
    env: { HOOKGUARD_SECRET: 'whsec-new-1,whsec-old-2' },
    expected: settings({ mode: 'secret', secret: ['whsec-new-1', 'whsec-old-2'] }, { signatureHeader: 'X-Sig' }),
  },
  {
    args: ['--mode=secret', '--secret=whsec-a-1,,whsec-b-2,'],
    env: { HOOKGUARD_SECRET: 'ignored' },
    expected: settings({ mode: 'secret', secret: ['whsec-a-1', 'whsec-b-2'] }),
  },
  // A list as people type it: the spaces and tabs around each entry are no part of it.
  {
    args: ['--mode', 'secret'],
    env: { HOOKGUARD_SECRET: ' whsec-new-1, \twhsec-old-2\t ' },
    expected: settings({ mode: 'secret', secret: ['whsec-new-1', 'whsec-old-2'] }),
  },
  // One secret, with no comma, is taken whole at any length; a space inside it stays.
  { args: ['--mode', 'secret', '--secret', 'x'], env: {}, expected: settings({ mode: 'secret', secret: ['x'] }) },
  { args: ['--mode', 'secret', '--secret', 'a b'], env: {}, expected: settings({ mode: 'secret', secret: ['a b'] }) },
  {
    args: ['--mode', 'oauth2', '--token-path', `/${'t'.repeat(255)}`],
    env: { HOOKGUARD_APPID: 'app-env', HOOKGUARD_APP_SECRET: 'as-env' },
    expected: settings({ mode: 'oauth2', appId: 'app-env', secret: 'as-env' }, { tokenPath: `/${'t'.repeat(255)}` }),
  },
  {
    args: ['--mode', 'oauth2', '--token-path', "/o-2/a_b.c~!$&'()*+,;=:@"],
    env: { HOOKGUARD_APPID: 'app-env', HOOKGUARD_APP_SECRET: 'as-env' },
    expected: settings({ mode: 'oauth2', appId: 'app-env', secret: 'as-env' }, { tokenPath: "/o-2/a_b.c~!$&'()*+,;=:@" }),
  },
  {
    args: ['--mode', 'secret', '--secret', 'whsec-1', '--signature-header', "x-!#$%&'*+-.^_`|~9"],
    env: {},
    expected: settings({ mode: 'secret', secret: ['whsec-1'] }, { signatureHeader: "x-!#$%&'*+-.^_`|~9" }),
  },
  {
    args: ['--mode', 'basic', '--username', 'u-flag', '--password', 'p-flag'],
    env: { HOOKGUARD_USERNAME: 'u-env', HOOKGUARD_PASSWORD: 'p-env' },
    expected: settings({ mode: 'basic', username: 'u-flag', password: 'p-flag' }),
  },
  {
    args: ['--mode', 'basic'],
    env: { HOOKGUARD_USERNAME: 'u-env', HOOKGUARD_PASSWORD: 'p-env' },
    expected: settings({ mode: 'basic', username: 'u-env', password: 'p-env' }),
  },
  {
    args: ['--mode', 'oauth2', '--appid', 'app-flag', '--app-secret', 'as-flag', '--token-path', '/oauth/token'],
    env: {},
    expected: settings({ mode: 'oauth2', appId: 'app-flag', secret: 'as-flag' }, { tokenPath: '/oauth/token' }),
  },
  {
    args: ['--mode', 'oauth2', '--port', '65535'],
    env: { HOOKGUARD_APPID: 'app-env', HOOKGUARD_APP_SECRET: 'as-env' },
    expected: settings({ mode: 'oauth2', appId: 'app-env', secret: 'as-env' }, { port: 65535 }),
  },
]

/** The receiver's part of what `inspect` reads, and its bounds. */
function inspectReceiver(args: string[], env: Env): Settings {
  const { auth, port, signatureHeader, tokenPath, maxConnections, maxInFlightBytes } = inspectSettings(args, env)
  return { auth, port, signatureHeader, tokenPath, maxConnections, maxInFlightBytes }
}

describe('the options hookguard listen and hookguard inspect share', () => {
  it.each(CASES)('read the same settings from $args and $env', ({ args, env, expected }) => {
    expect(listenSettings(['--port', '0', ...args], env)).toEqual(expected)
    expect(inspectReceiver(['--port', '0', ...args], env)).toEqual(expected)
  })

  it('are each given, by flag and by environment variable, in the cases above', () => {
    const flags = new Set(CASES.flatMap(({ args }) => args.filter((arg) => arg.startsWith('--')).map((arg) => arg.replace(/=.*$/, ''))))
    const variables = new Set(CASES.flatMap(({ env }) => Object.keys(env)))
    for (const [name, spec] of Object.entries(SHARED)) {
      expect(flags, name).toContain(`--${name}`)
      if (spec.env !== undefined) expect(variables, name).toContain(spec.env)
    }
  })

  it('are all taken by both commands', () => {
    for (const name of Object.keys(SHARED)) {
      expect(Object.keys(LISTEN_OPTIONS)).toContain(name)
      expect(Object.keys(INSPECT_OPTIONS)).toContain(name)
    }
  })

  it.each([
    ['an unknown option', ['--mode', 'none', '--secrte=hunter2']],
    ['an option without its value', ['--mode', 'none', '--port']],
    ['an unknown short option', ['--mode', 'none', '-xhunter2']],
    ['a port out of range', ['--mode', 'none', '--port', '70000']],
    ['an unknown mode', ['--mode', 'hunter2']],
    ['an argument besides the options', ['--mode', 'none', 'hunter2']],
    ['no secret', ['--mode', 'secret']],
    ['only commas for secrets', ['--mode', 'secret', '--secret', ',,']],
    ['only spaces and commas for secrets', ['--mode', 'secret', '--secret', ' , \t']],
    ['a list with an entry shorter than 8 characters', ['--mode', 'secret', '--secret', 'hunter2-0123456789abcdef,x']],
    ['a list with a short entry after spaces', ['--mode', 'secret', '--secret', 'hunter2-0123456789, hunter2']],
    ['a secret glued to its flag by a colon', ['--mode', 'none', '--secret:hunter2']],
    ['a secret glued to its flag by a dash', ['--mode', 'none', '--secret\u2014hunter2']],
    ['a secret glued to its flag', ['--mode', 'none', '--secrethunter2']],
    ['a password glued to its flag', ['--mode', 'none', '--password:hunter2']],
    ['an empty signature header', ['--mode', 'secret', '--secret', 's', '--signature-header', '']],
    ['a signature header with a space', ['--mode', 'secret', '--secret', 's', '--signature-header', 'a b']],
    ['a signature header with a colon', ['--mode', 'secret', '--secret', 's', '--signature-header', 'X:Y']],
    ['a signature header not in ASCII', ['--mode', 'secret', '--secret', 's', '--signature-header', 'x-\u00dfig']],
    ...[
      '/t\u00f8ken',
      '/%74oken',
      '/x/../token',
      '/./token',
      '/t?a=1',
      '/t#f',
      '/a b',
      '//token',
      '/token/',
      '/',
      `/${'t'.repeat(256)}`,
    ].map((path) => [
      `the token path ${path.slice(0, 20)}`,
      ['--mode', 'oauth2', '--appid', 'a', '--app-secret', 'hunter2', '--token-path', path],
    ]),
    ['no user name', ['--mode', 'basic', '--password', 'hunter2']],
    ['an empty password', ['--mode', 'basic', '--username', 'u', '--password', '']],
    ['no app secret', ['--mode', 'oauth2', '--appid', 'a']],
    ['a token path that is not a path', ['--mode', 'oauth2', '--appid', 'a', '--app-secret', 'hunter2', '--token-path', 'hunter2']],
  ])('are refused in the same words by both, with exit code 2 and no value quoted, for %s', async (_what, args) => {
    const answers = await Promise.all(
      ['listen', 'inspect'].map(async (command) => {
        const { io, stdout, stderr } = captureIo({ env: { HOOKGUARD_PASSWORD: 'hunter2' } })
        const code = await run([command, ...args], io)
        return { code, stdout: stdout(), stderr: stderr().replace(`hookguard ${command} --help`, 'hookguard <command> --help') }
      }),
    )
    expect(answers[0]?.code).toBe(2)
    expect(answers[0]?.stdout).toBe('')
    expect(answers[0]?.stderr).toMatch(/^hookguard: \S.*\nRun 'hookguard <command> --help' for usage\.\n$/)
    expect(answers[0]?.stderr).not.toContain('hunter2')
    expect(answers[1]).toEqual(answers[0])
  })
})

describe('the messages of hookguard listen and hookguard inspect', () => {
  const refusal = async (command: string, args: string[]) => {
    const { io, stderr } = captureIo()
    expect(await run([command, ...args], io)).toBe(2)
    return stderr().split('\n')[0]
  }

  it.each(['listen', 'inspect'])('%s: say that a list entry is short, and that a secret with a comma cannot be a list', async (command) => {
    expect(await refusal(command, ['--mode', 'secret', '--secret', 'Ld7pQ2vX9mK4sR8tW1yZ3aB6cE0fG5hJq,x'])).toBe(
      'hookguard: --secret or HOOKGUARD_SECRET: a list entry is shorter than 8 characters; a secret holding a comma cannot be given as a list',
    )
  })

  it.each(['listen', 'inspect'])('%s: name the flag of a token path or a signature header they refuse', async (command) => {
    expect(await refusal(command, ['--mode', 'oauth2', '--appid', 'a', '--app-secret', 's', '--token-path', '/a b'])).toMatch(
      /^hookguard: --token-path must be an absolute path of at most 256 characters/,
    )
    expect(await refusal(command, ['--mode', 'secret', '--secret', 's', '--signature-header', ''])).toMatch(
      /^hookguard: --signature-header must be an HTTP header name/,
    )
  })

  it.each(['listen', 'inspect'])('%s: name an unknown option only as far as it looks like one', async (command) => {
    expect(await refusal(command, ['--mode', 'none', '--secret:whsec-live-9f8e'])).toBe(
      "hookguard: Unknown option '--secret' followed by more (not shown: it may be a secret)",
    )
    expect(await refusal(command, ['--mode', 'none', '--secrte'])).toBe("hookguard: Unknown option '--secrte'")
  })
})

describe.each([
  ['listen', LISTEN_OPTIONS],
  ['inspect', INSPECT_OPTIONS],
] as const)('hookguard %s --help', (command, table: OptionTable) => {
  it('lists every option of its table, with its value, its variable and its default', async () => {
    const { io, stdout } = captureIo()
    expect(await run([command, '--help'], io)).toBe(0)
    const lines = stdout().split('\n')
    for (const [name, spec] of Object.entries(table)) {
      const line = lines.find((text) => text.startsWith(`  --${name}${spec.value === undefined ? '' : ` ${spec.value}`} `))
      expect(line, name).toBeDefined()
      expect(line, name).toContain(spec.help)
      if (spec.env !== undefined) expect(line, name).toContain(`$${spec.env}`)
      if (spec.default !== undefined) expect(line, name).toContain(`(default: ${spec.default})`)
    }
  })

  it('names no option that the command does not take', async () => {
    const { io, stdout } = captureIo()
    await run([command, '--help'], io)
    for (const [, name] of stdout().matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)) {
      if (name !== 'help') expect(Object.keys(table), `--${name}`).toContain(name)
    }
  })

  it('never shows a credential held in the environment', async () => {
    const env = { HOOKGUARD_SECRET: 'canary-secret', HOOKGUARD_PASSWORD: 'canary-password', HOOKGUARD_APP_SECRET: 'canary-app' }
    const { io, stdout, stderr } = captureIo({ env })
    expect(await run([command, '--mode', 'secret', '--help'], io)).toBe(0)
    expect(`${stdout()}${stderr()}`).not.toMatch(/canary/)
  })
})
