import { credential } from '@hookguard/inspect/cli'
import { requestToken } from '../../token.ts'
import { atMostPositionals, httpUrl, parseCommand } from '../args.ts'
import { UsageError } from '../failures.ts'
import type { CliIo } from '../io.ts'

/** `hookguard token <token_url>`: the token answer as JSON on stdout, for `jq` and friends. */
export async function tokenCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    appid: { type: 'string' },
    'app-secret': { type: 'string' },
    // Parsed only to be refused with a pointer: in every other command --secret is the signing
    // secret, and one flag name means one thing throughout.
    secret: { type: 'string' },
  })
  if (values.secret !== undefined) {
    throw new UsageError(
      '--secret is the signing secret (mode secret); the token address takes the app secret: --app-secret or HOOKGUARD_APP_SECRET',
    )
  }
  atMostPositionals(positionals, 1, 'one token URL')
  const tokenUrl = httpUrl(positionals[0], '<token_url>')
  const appId = credential(values.appid, 'appid', io.env)
  const appSecret = credential(values['app-secret'], 'app-secret', io.env)

  const answer = await requestToken({ tokenUrl, appId, appSecret, fetch: io.fetch, signal: io.signal })
  io.stdout.write(`${JSON.stringify(answer, null, 2)}\n`)
  return 0
}
