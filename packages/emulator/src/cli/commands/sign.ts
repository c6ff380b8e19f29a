import { sign } from '@hookguard/core'
import { signingSecret } from '@hookguard/inspect/cli'
import { atMostPositionals, parseCommand } from '../args.ts'
import { type CliIo, readBody } from '../io.ts'

/** `hookguard sign [file]`: the signature alone on stdout, so that `$(hookguard sign …)` is the header value. */
export async function signCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand(args, { secret: { type: 'string' } })
  atMostPositionals(positionals, 1, 'at most one file')
  const key = signingSecret(values.secret, io.env)
  const body = await readBody(positionals[0] ?? '-', io)
  io.stdout.write(`${await sign(body, key)}\n`)
  return 0
}
