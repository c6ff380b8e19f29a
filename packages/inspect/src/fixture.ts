import { DEFAULT_SIGNATURE_HEADER } from '@hookguard/core'
import type { ExportContext } from './export-context.ts'
import type { InspectedRecord } from './record.ts'
import { basicUser, decodeName as decodeFieldName, formPieces, isFormBody, REDACTED, redactHeader, redactUrl } from './redact.ts'

/**
 * The Vitest fixture of a delivery: `delivery-<id>.json`, the request as recorded with its
 * credentials left out, and `delivery-<id>.test.ts`, which replays it through `createReceiver`
 * with the settings from the environment and asserts the recorded verdict and code.
 */

/**
 * What a fixture carries in place of credentials that were refused, so that its test is refused
 * the same way: the recorded user name with {@link WRONG_PASSWORD}, or {@link INVALID_TOKEN}. What
 * was received is never written: a wrong password may be a near miss of the real one.
 */
export const WRONG_PASSWORD = 'hookguard-inspect-wrong-password'
export const INVALID_TOKEN = 'hookguard-inspect-invalid-token'

/** The fixture a Vitest test replays: the request as recorded (credentials left out) and the verdict to expect. */
export interface Fixture {
  id: number
  method: string
  /** Path and query, `access_token` left out and any other credential `[redacted]`. */
  path: string
  mode: InspectedRecord['mode']
  /** As recorded, `Authorization` left out (the test writes its own from the environment), cookies `[redacted]`. */
  headers: [string, string][]
  bodyBase64: string
  expected: { verdict: 'verified' | 'refused'; status: number; code?: string; hint?: string }
  /** Whether the recorded request carried credentials the test must add back from the environment (Basic, a token). */
  authenticated: boolean
  /**
   * The delivery was refused for its credentials: the fixture carries a stand-in refused the same
   * way (in `headers` or `path`), never what was received.
   */
  refusedCredentials?: 'wrong_password' | 'invalid_token'
  /**
   * Mode oauth2, a token sent as a form field: the indexes (fields split at `&`) of the body's
   * `access_token` fields, `[redacted]` here, which the test fills with a fresh token.
   */
  formToken?: number[]
  /**
   * Mode secret, a form whose credential fields are `[redacted]` here, recorded with a valid
   * signature (refused for its body, not its signature): the test signs the body again.
   */
  resign?: boolean
}

const SIGNATURE_CODES = new Set(['missing_signature', 'invalid_signature'])

/**
 * The body a fixture keeps: a form's credential fields' values `[redacted]` (an `access_token`
 * refused in mode oauth2 replaced with {@link INVALID_TOKEN}), and the fields that carry a token
 * for the test to fill.
 */
function fixtureBody(record: InspectedRecord, refused: Fixture['refusedCredentials']): { body: Uint8Array; formToken: number[] } {
  const pieces = isFormBody(record.headers) ? formPieces(record.body) : []
  if (pieces.every((piece) => 'text' in piece)) return { body: record.body, formToken: [] }
  const formToken: number[] = []
  let fields = 0
  let text = ''
  for (const piece of pieces) {
    if ('text' in piece) {
      fields += piece.text.split('&').length - 1
      text += piece.text
      continue
    }
    const isToken = record.mode === 'oauth2' && decodeFieldName(piece.name) === 'access_token'
    if (isToken && refused === undefined) formToken.push(fields)
    text += isToken && refused === 'invalid_token' ? INVALID_TOKEN : REDACTED
  }
  return { body: new Uint8Array(Buffer.from(text, 'latin1')), formToken }
}

/** Headers a fixture does not keep: the connection's, and those of a proxy. */
const NOT_KEPT = new Set(['authorization', 'proxy-authorization', 'host', 'connection', 'keep-alive', 'transfer-encoding', 'te', 'upgrade'])

export function toFixture(record: InspectedRecord): Fixture {
  const query = record.url.indexOf('?') < 0 ? '' : record.url.slice(record.url.indexOf('?') + 1)
  const hadToken = new URLSearchParams(query).has('access_token')
  const authorization = record.headers.find(([name]) => name.toLowerCase() === 'authorization')
  const refused = record.verdict === 'refused' ? credentialRefusal(record) : undefined
  const parts = query === '' ? [] : query.split('&').filter((part) => decodeName(part) !== 'access_token')
  let path = redactUrl(`${record.url.split('?')[0]}${parts.length === 0 ? '' : `?${parts.join('&')}`}`)
  // A token refused in the query is refused again from there.
  if (refused === 'invalid_token' && hadToken) path += `${parts.length === 0 ? '?' : '&'}access_token=${INVALID_TOKEN}`
  const headers: [string, string][] = record.headers
    .filter(([name]) => !NOT_KEPT.has(name.toLowerCase()))
    .map(([name, value]) => [name, redactHeader(name, value)])
  if (refused === 'wrong_password' && authorization !== undefined) {
    const user = basicUser(authorization[1].trim().split(/\s+/)[1] ?? '') ?? ''
    headers.push([authorization[0], `Basic ${Buffer.from(`${user}:${WRONG_PASSWORD}`).toString('base64')}`])
  }
  if (refused === 'invalid_token' && !hadToken && authorization !== undefined) headers.push([authorization[0], `Bearer ${INVALID_TOKEN}`])
  const { body, formToken } = fixtureBody(record, refused)
  const resign = record.mode === 'secret' && body !== record.body && !(record.code !== undefined && SIGNATURE_CODES.has(record.code))
  return {
    id: record.id,
    method: record.method,
    path,
    mode: record.mode,
    headers,
    bodyBase64: Buffer.from(body).toString('base64'),
    expected: {
      verdict: record.verdict,
      status: record.status,
      ...(record.code !== undefined && { code: record.code }),
      ...(record.hint !== undefined && { hint: record.hint }),
    },
    authenticated: refused === undefined && (hadToken || authorization !== undefined || formToken.length > 0),
    ...(refused !== undefined && { refusedCredentials: refused }),
    ...(formToken.length > 0 && { formToken }),
    ...(resign && { resign }),
  }
}

/** The refusal came from the credentials of the mode (they were checked and wrong): a stand-in must be refused too. */
function credentialRefusal(record: InspectedRecord): Fixture['refusedCredentials'] {
  if (record.mode === 'basic' && record.code === 'invalid_credentials') return 'wrong_password'
  if (record.mode === 'oauth2' && record.code === 'invalid_token') return 'invalid_token'
  return undefined
}

function decodeName(part: string): string {
  const name = part.indexOf('=') < 0 ? part : part.slice(0, part.indexOf('='))
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '))
  } catch {
    return name
  }
}

export function fixtureJson(record: InspectedRecord): string {
  return `${JSON.stringify(toFixture(record), null, 2)}\n`
}

/** The name the fixture files take: `delivery-<id>.json` and `delivery-<id>.test.ts`. */
export const fixtureName = (record: InspectedRecord) => `delivery-${record.id}`

/**
 * The generated test's imports, written out at run time: as literal text in this module, a
 * packaging check that reads imports from the bundle would take them for this package's own.
 */
const testImports = (resign: boolean) =>
  (
    [
      ['readFileSync', 'node:fs'],
      [resign ? 'createReceiver, sign' : 'createReceiver', '@hookguard/core'],
      ['expect, it', 'vitest'],
    ] as const
  )
    .map(([names, from]) => `import { ${names} } from ${`'${from}'`}`)
    .join('\n')

/** What the generated test does about credentials, before it verifies. */
function credentialsStep(fixture: Fixture, context: ExportContext): string {
  if (fixture.refusedCredentials === 'wrong_password') {
    return `  // Refused for its credentials: the fixture carries the recorded user name with a wrong password
  // (${JSON.stringify(WRONG_PASSWORD)}), never the password received, so that this is refused as the delivery was.
`
  }
  if (fixture.refusedCredentials === 'invalid_token') {
    return `  // Refused for its token: the fixture carries one that is not valid (${JSON.stringify(INVALID_TOKEN)}) where the
  // delivery had its own, never the token received, so that this is refused as the delivery was.
`
  }
  if (!fixture.authenticated || fixture.mode === 'secret' || fixture.mode === 'none') return ''
  if (fixture.mode === 'basic') {
    return `  // The recorded Authorization is not kept: written again from the environment.
  const user = env('HOOKGUARD_USERNAME', ${JSON.stringify(context.username ?? '')})
  headers.set('authorization', \`Basic \${Buffer.from(\`\${user}:\${env('HOOKGUARD_PASSWORD')}\`).toString('base64')}\`)
`
  }
  const fresh = `  // The recorded token has expired by now: a fresh one from the same settings.
  const issued = await receiver.token(
    new Request(\`http://localhost/token?appid=\${encodeURIComponent(env('HOOKGUARD_APPID', ${JSON.stringify(context.appId ?? '')}))}&secret=\${encodeURIComponent(env('HOOKGUARD_APP_SECRET'))}&grant_type=client_credentials\`),
  )
  const token = (JSON.parse(issued.body) as { access_token: string }).access_token
`
  if (fixture.formToken !== undefined) {
    return `${fresh}  // Sent as a form field: written where the recorded one was.
  const fields = body.toString('latin1').split('&')
  for (const index of ${JSON.stringify(fixture.formToken)}) fields[index] = \`\${fields[index]?.split('=')[0]}=\${encodeURIComponent(token)}\`
  body = Buffer.from(fields.join('&'), 'latin1')
`
  }
  return `${fresh}  url.searchParams.set('access_token', token)
`
}

/** Mode secret, a form's credentials `[redacted]`: the recorded signature covered other bytes. */
function resignStep(fixture: Fixture, header: string): string {
  if (fixture.resign !== true) return ''
  return `  // The form's credential fields are [redacted] here: the recorded signature was valid, so the body is signed again.
  headers.set(${JSON.stringify(header)}, await sign(body, env('HOOKGUARD_SECRET').split(',')[0] as string))
`
}

/** Text for a `//` comment: printable ASCII only, anything else escaped, so that no line terminator (U+2028 included) ends it. */
const commentText = (text: string) =>
  text.replace(/[^\x20-\x7e]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`)

/**
 * A Vitest file that replays the fixture through `createReceiver`, with the settings from the
 * environment (the same variables as `hookguard inspect`), and asserts the recorded verdict and
 * code. Point `receiver` at your own options to pin your app's behaviour.
 */
export function fixtureTest(record: InspectedRecord, context: ExportContext): string {
  const name = fixtureName(record)
  const fixture = toFixture(record)
  const header = context.signatureHeader ?? DEFAULT_SIGNATURE_HEADER
  const auth =
    record.mode === 'secret'
      ? `{ mode: 'secret', secret: env('HOOKGUARD_SECRET').split(',') }`
      : record.mode === 'basic'
        ? `{ mode: 'basic', username: env('HOOKGUARD_USERNAME', ${JSON.stringify(context.username ?? '')}), password: env('HOOKGUARD_PASSWORD') }`
        : record.mode === 'oauth2'
          ? `{ mode: 'oauth2', appId: env('HOOKGUARD_APPID', ${JSON.stringify(context.appId ?? '')}), secret: env('HOOKGUARD_APP_SECRET') }`
          : `{ mode: 'none' }`
  // A record loaded from a save file may carry any text as its code: it goes in as data, never as code.
  const outcome = `${record.verdict}${record.code === undefined ? '' : ` (${record.code})`}`
  return `// Recorded by hookguard inspect: delivery #${record.id}, ${commentText(outcome)}.
// Run with: npx vitest run ${name}.test.ts (settings from the same environment variables as hookguard inspect)
${testImports(fixture.resign === true)}

interface Fixture {
  method: string
  path: string
  headers: [string, string][]
  bodyBase64: string
  expected: { verdict: 'verified' | 'refused'; status: number; code?: string; hint?: string }
}

const fixture = JSON.parse(readFileSync(new URL('./${name}.json', import.meta.url), 'utf8')) as Fixture

function env(name: string, fallback?: string): string {
  const value = process.env[name] ?? fallback
  if (value === undefined || value === '') throw new Error(\`set \${name} to the settings the delivery was recorded with\`)
  return value
}

it(${JSON.stringify(`answers delivery #${record.id} as recorded: ${outcome}`)}, async () => {
  const receiver = createReceiver({ auth: ${auth}, signatureHeader: ${JSON.stringify(header)} })
  const url = new URL(fixture.path, 'http://localhost')
  const headers = new Headers(fixture.headers)
  ${fixture.formToken === undefined ? 'const' : 'let'} body = Buffer.from(fixture.bodyBase64, 'base64')
${credentialsStep(fixture, context)}${resignStep(fixture, header)}  const result = await receiver.verify(new Request(url, { method: fixture.method, headers, body }))
  if (fixture.expected.verdict === 'verified') {
    expect(result.ok).toBe(true)
  } else {
    expect(result.ok).toBe(false)
    if (!result.ok) {
      expect(result.response.status).toBe(fixture.expected.status)
      expect(result.error?.code).toBe(fixture.expected.code)
    }
  }
})
`
}
