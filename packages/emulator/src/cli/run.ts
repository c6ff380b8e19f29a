import packageJson from '../../package.json' with { type: 'json' }
import { deliver } from '../deliver.ts'
import { EmulatorError } from '../errors.ts'
import { CommandFailure, UsageError, wantsHelp } from './args.ts'
import { listenCommand } from './commands/listen.ts'
import { sendCommand } from './commands/send.ts'
import { signCommand } from './commands/sign.ts'
import { tokenCommand } from './commands/token.ts'
import { INSPECT_HELP, LISTEN_HELP, SEND_HELP, SIGN_HELP, TOKEN_HELP, TOP_HELP } from './help.ts'
import { type CliIo, painter } from './io.ts'

export type { CliIo, Output } from './io.ts'

interface Command {
  help: string
  run(args: readonly string[], io: CliIo): Promise<number>
}

const COMMANDS: Readonly<Record<string, Command>> = {
  sign: { help: SIGN_HELP, run: signCommand },
  send: { help: SEND_HELP, run: sendCommand },
  listen: { help: LISTEN_HELP, run: listenCommand },
  token: { help: TOKEN_HELP, run: tokenCommand },
  // Loaded only when asked for: the other commands never load the inspector's servers and page.
  inspect: {
    help: INSPECT_HELP,
    run: async (args, io) => (await import('@hookguard/inspect')).inspectCommand(args, io, { deliver }),
  },
}

/**
 * The `hookguard` command line, in-process: `argv` without the node and script paths. Resolves
 * the exit code (0 done, 1 failed, 2 usage error) and never throws; everything it prints goes
 * through `io`, so that tests drive it like a user would.
 *
 * @example
 * const code = await run(['sign', 'payload.json'], { stdout: process.stdout, stderr: process.stderr, env: process.env })
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv
  if (name === undefined) {
    io.stderr.write(TOP_HELP)
    return 2
  }
  if (name === '--help' || name === '-h' || (name === 'help' && args.length === 0)) {
    io.stdout.write(TOP_HELP)
    return 0
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${packageJson.version}\n`)
    return 0
  }
  if (name === 'help') return run([args[0] as string, '--help'], io)

  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
  if (command === undefined) {
    // An unknown first word may be a mistyped secret; it is not echoed.
    return usageError(io, `unknown command; expected one of ${Object.keys(COMMANDS).join(', ')}`, 'hookguard --help')
  }
  if (wantsHelp(args)) {
    io.stdout.write(command.help)
    return 0
  }
  try {
    return await command.run(args, io)
  } catch (error) {
    if (error instanceof UsageError) return usageError(io, error.message, `hookguard ${name} --help`)
    // The library's own checks (a username with a colon, settings the middleware refuses) are
    // about what the user typed.
    if (error instanceof TypeError && /^@hookguard\/[a-z]+: /.test(error.message)) {
      return usageError(io, error.message.replace(/^@hookguard\/[a-z]+: /, ''), `hookguard ${name} --help`)
    }
    if (error instanceof CommandFailure || error instanceof EmulatorError)
      return failure(io, error.message.replace(/^@hookguard\/emulator: /, ''))
    return failure(io, `unexpected error: ${error instanceof Error ? error.message : String(error)}`)
  }
}

function usageError(io: CliIo, message: string, helpCommand: string): number {
  const paint = painter(io.stderr, io.env)
  io.stderr.write(`${paint('red', 'hookguard:')} ${message}\nRun '${helpCommand}' for usage.\n`)
  return 2
}

function failure(io: CliIo, message: string): number {
  const paint = painter(io.stderr, io.env)
  io.stderr.write(`${paint('red', 'hookguard:')} ${message}\n`)
  return 1
}
