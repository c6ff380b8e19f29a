import { STATUS_CODES } from 'node:http'
import { formatBasicAuthorization } from '@hookguard/core/adapter'
import { credential, RECEIVER_OPTIONS, signingSecret } from '@hookguard/inspect/cli'
import { type DeliverOptions, deliver } from '../../deliver.ts'
import { describeUrl } from '../../errors.ts'
import { SAMPLE_EVENT_NAMES, type SampleEventName, sampleEvent } from '../../samples.ts'
import { answerText } from '../answer.ts'
import { atMostPositionals, httpUrl, mode, parseCommand } from '../args.ts'
import { CommandFailure, UsageError } from '../failures.ts'
import { type CliIo, painter, readBody } from '../io.ts'

/** Seconds `send` waits for its token and its answer by default: past them the receiver is taken to hang. */
export const DEFAULT_SEND_TIMEOUT = 30

const OPTIONS = {
  mode: { type: 'string' },
  secret: { type: 'string' },
  'signature-header': { type: 'string' },
  username: { type: 'string' },
  password: { type: 'string' },
  'token-url': { type: 'string' },
  appid: { type: 'string' },
  'app-secret': { type: 'string' },
  file: { type: 'string' },
  event: { type: 'string' },
  include: { type: 'boolean', short: 'i' },
  timeout: { type: 'string' },
} as const

/** `hookguard send <url>`: one delivery through {@link deliver}; exit 0 only for a 2xx answer, so scripts can assert on it. */
export async function sendCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand(args, OPTIONS)
  atMostPositionals(positionals, 1, 'one URL')
  const url = httpUrl(positionals[0], '<url>')
  const seconds = timeoutSeconds(values.timeout)
  // What this run sent that the answer may echo (the access token is known once fetched): never printed.
  const sent: string[] = []
  const fetchImpl = io.fetch ?? fetch
  const recording: typeof fetch = (input, init) => {
    const token = new URL(input instanceof Request ? input.url : String(input)).searchParams.get('access_token')
    if (token !== null) sent.push(token)
    return fetchImpl(input, init)
  }
  const base = { url, payload: undefined as unknown, fetch: recording }

  let options: DeliverOptions
  switch (mode(values.mode)) {
    case 'secret':
      options = {
        ...base,
        mode: 'secret',
        secret: signingSecret(values.secret, io.env),
        signatureHeader: signatureHeader(values['signature-header']),
      }
      break
    case 'basic':
      options = {
        ...base,
        mode: 'basic',
        username: credential(values.username, 'username', io.env),
        password: credential(values.password, 'password', io.env),
      }
      break
    case 'oauth2':
      options = {
        ...base,
        mode: 'oauth2',
        tokenUrl: httpUrl(values['token-url'], '--token-url'),
        appId: credential(values.appid, 'appid', io.env),
        appSecret: credential(values['app-secret'], 'app-secret', io.env),
      }
      break
    case 'none':
      options = { ...base, mode: 'none' }
      break
  }
  options.payload = await payload(values.file, values.event, io)

  // From here: the payload, however slowly it was piped in, is read.
  const timeout = AbortSignal.timeout(seconds * 1000)
  options.signal = io.signal === undefined ? timeout : AbortSignal.any([io.signal, timeout])
  const answer = await deliver(options).catch((error: unknown) => {
    if (timeout.aborted && !io.signal?.aborted) throw new CommandFailure(`no answer from ${describeUrl(new URL(url))} within ${seconds} s`)
    throw error
  })
  const redact = redactor([...credentialsOf(options), ...sent])
  const paint = painter(io.stdout, io.env)
  const ok = answer.status >= 200 && answer.status < 300
  io.stdout.write(`${paint(ok ? 'green' : 'red', `${answer.status} ${STATUS_CODES[answer.status] ?? ''}`.trimEnd())}\n`)
  if (values.include) {
    for (const [name, value] of Object.entries(answer.headers)) io.stdout.write(`${paint('dim', `${name}:`)} ${redact(value)}\n`)
    io.stdout.write('\n')
  }
  // With --include the content type is among the headers already.
  io.stdout.write(redact(answerText(answer.body, answer.headers['content-type'], !values.include, answer.truncated === true)))
  return ok ? 0 : 1
}

/** What a receiver that echoes its request could print of this run's credentials, as sent and as encoded on the way. */
function credentialsOf(options: DeliverOptions): string[] {
  const plain =
    options.mode === 'secret'
      ? [options.secret]
      : options.mode === 'basic'
        ? [
            options.password,
            `${options.username}:${options.password}`,
            formatBasicAuthorization(options.username, options.password).slice('Basic '.length),
          ]
        : options.mode === 'oauth2'
          ? [options.appSecret]
          : []
  return plain.flatMap((text) => [text, encodeURIComponent(text), new URLSearchParams({ x: text }).toString().slice(2)])
}

/** Replaces each of `secrets` (the longest first, so that none is left half-shown) with `[redacted]`. */
function redactor(secrets: readonly string[]): (text: string) => string {
  const needles = [...new Set(secrets.filter((secret) => secret !== ''))].sort((a, b) => b.length - a.length)
  return (text) => needles.reduce((out, needle) => out.replaceAll(needle, '[redacted]'), text)
}

function timeoutSeconds(value: string | undefined): number {
  if (value === undefined) return DEFAULT_SEND_TIMEOUT
  const seconds = /^\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN
  if (!(seconds > 0 && seconds <= 3600)) throw new UsageError('--timeout must be a number of seconds, more than 0 and at most 3600')
  return seconds
}

/** Checked as `listen` and `inspect` check it, so that the flag is named, not the library's option. */
function signatureHeader(value: string | undefined): string | undefined {
  const problem = value === undefined ? undefined : RECEIVER_OPTIONS['signature-header'].check(value)
  if (problem !== undefined) throw new UsageError(`--signature-header ${problem}`)
  return value
}

async function payload(file: string | undefined, event: string | undefined, io: CliIo): Promise<unknown> {
  if (file !== undefined && event !== undefined) throw new UsageError('give --file or --event, not both')
  // A file holds the exact bytes to send: they go out, and are signed, as they are.
  if (file !== undefined) return readBody(file, io)
  const name = event ?? SAMPLE_EVENT_NAMES[0]
  if (!(SAMPLE_EVENT_NAMES as readonly string[]).includes(name as string)) {
    throw new UsageError(`--event must be one of ${SAMPLE_EVENT_NAMES.join(', ')}`)
  }
  return sampleEvent(name as SampleEventName)
}
