import packageJson from '../../package.json' with { type: 'json' }
import { deliver } from '../deliver.ts'
import { EmulatorError } from '../errors.ts'
import { wantsHelp } from './args.ts'
import { listenCommand } from './commands/listen.ts'
import { sendCommand } from './commands/send.ts'
import { signCommand } from './commands/sign.ts'
import { tokenCommand } from './commands/token.ts'
import { CommandFailure, UsageError } from './failures.ts'
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
  if (command === undefined) return usageError(io, unknownCommand(name), 'hookguard --help')
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

/** Edits within which an unknown word is taken for a mistyped command, and named. */
const MAX_TYPO_DISTANCE = 2

/**
 * What to say about an unknown first word. One within a couple of edits of a command is a typo
 * (`sned`): it is quoted, with the command meant. Anything else may be a secret typed in the wrong
 * place (a flag forgotten), so it is not echoed to a terminal or a CI log.
 */
function unknownCommand(word: string): string {
  const expected = `expected one of ${Object.keys(COMMANDS).join(', ')}`
  const nearest = Object.keys(COMMANDS)
    .map((name) => ({ name, distance: editDistance(word.toLowerCase(), name) }))
    .sort((a, b) => a.distance - b.distance)[0]
  if (nearest === undefined || nearest.distance > MAX_TYPO_DISTANCE) return `unknown command (not shown: it may be a secret); ${expected}`
  return `unknown command "${word}"; did you mean "${nearest.name}"? (${expected})`
}

/** Levenshtein distance, with a swap of two neighbours counted as one edit (`sned` → `send`). */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = rows[i] as number[]
      const above = rows[i - 1] as number[]
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, ((rows[i - 2] as number[])[j - 2] as number) + 1)
      row[j] = best
    }
  }
  return (rows[a.length] as number[])[b.length] as number
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
