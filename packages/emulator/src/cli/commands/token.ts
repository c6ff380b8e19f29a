import { requestToken } from '../../token.ts'
import { atMostPositionals, httpUrl, parseCommand, required, secret, UsageError } from '../args.ts'
import type { CliIo } from '../io.ts'

/** `hookguard token <token_url>`: the token answer as JSON on stdout, for `jq` and friends. */
export async function tokenCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    appid: { type: 'string' },
    secret: { type: 'string' },
    'app-secret': { type: 'string' },
  })
  atMostPositionals(positionals, 1, 'one token URL')
  const tokenUrl = httpUrl(positionals[0], '<token_url>')
  const appId = required(values.appid, '--appid')
  if (values.secret !== undefined && values['app-secret'] !== undefined) throw new UsageError('give --secret or --app-secret, not both')
  const appSecret = secret(values.secret ?? values['app-secret'], '--secret', 'HOOKGUARD_APP_SECRET', io.env)

  const answer = await requestToken({ tokenUrl, appId, appSecret, fetch: io.fetch, signal: io.signal })
  io.stdout.write(`${JSON.stringify(answer, null, 2)}\n`)
  return 0
}
