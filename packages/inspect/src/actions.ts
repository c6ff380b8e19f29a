import { randomBytes } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import { createReceiver, sign } from '@hookguard/core'
import { escapeLikeGson, formatBasicAuthorization } from '@hookguard/core/adapter'
import type { InspectorSettings } from './options.ts'
import type { InspectedRecord } from './record.ts'
import { SOURCE_HEADER } from './source-mark.ts'

/**
 * What the page's buttons do: replay recorded bytes, resend an edited body signed again, and
 * the presets that break one thing on purpose. Each sends to the inspector's own receiving
 * address, so the result is recorded (and, in front of an app, forwarded) like any delivery.
 */

export interface SentAnswer {
  status: number
  /** The answer's `error` code, if it is a refusal. */
  code?: string
}

export interface RawRequest {
  method: string
  url: string
  headers: [string, string][]
  body: Uint8Array
}

/**
 * Headers a replay does not copy: the connection's, and the framing Node writes itself. A sender's
 * own `X-Hookguard-Inspect-Source` is its data, and is sent again like the rest.
 */
const NOT_REPLAYED = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length'])

/** Sends one request to the receiving address, marked with `source` (this run's {@link SourceMark} value), and reads its answer. */
export function sendRaw(receive: URL, { method, url, headers, body }: RawRequest, source: string): Promise<SentAnswer> {
  return new Promise((resolve, reject) => {
    // Raw header lines keep names as written; given that way, Node adds no Host of its own.
    const flat: string[] = ['host', receive.host]
    for (const [name, value] of headers) if (!NOT_REPLAYED.has(name.toLowerCase())) flat.push(name, value)
    flat.push('content-length', String(body.byteLength), SOURCE_HEADER, source)
    const req = httpRequest({ host: receive.hostname, port: receive.port, method, path: url, headers: flat }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => {
        if (chunks.length < 64) chunks.push(chunk)
      })
      res.on('end', () => {
        let code: string | undefined
        try {
          const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error?: unknown }
          if (typeof parsed.error === 'string') code = parsed.error
        } catch {
          // Not a JSON refusal.
        }
        resolve({ status: res.statusCode ?? 0, ...(code !== undefined && { code }) })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** The recorded request, byte for byte, `count` times at once (to see dedupe answer 409, then 200). */
export async function replay(receive: URL, record: InspectedRecord, count: number, source: string): Promise<SentAnswer[]> {
  const request = { method: record.method, url: record.url, headers: record.headers, body: record.body }
  return Promise.all(Array.from({ length: count }, () => sendRaw(receive, request, source)))
}

/** The presets, with what each breaks and the refusal it should get. */
export interface Preset {
  name: string
  mode: InspectorSettings['auth']['mode']
  label: string
  expected: string
}

export const PRESETS: readonly Preset[] = [
  { name: 'wrong_secret', mode: 'secret', label: 'Wrong secret', expected: '401 invalid_signature' },
  {
    name: 'secret_newline',
    mode: 'secret',
    label: 'Secret with a trailing newline',
    expected: '401 invalid_signature, diagnosis secret_newline',
  },
  {
    name: 'gson_body',
    mode: 'secret',
    label: 'Gson-escaped body, signature over the unescaped text',
    expected: '401 invalid_signature, diagnosis json_stringify',
  },
  { name: 'header_not_hex', mode: 'secret', label: 'Header not hex', expected: '401 invalid_signature, hint header_not_hex' },
  { name: 'header_short', mode: 'secret', label: 'Header cut short', expected: '401 invalid_signature, hint header_wrong_length' },
  { name: 'no_header', mode: 'secret', label: 'No signature header', expected: '401 missing_signature' },
  { name: 'wrong_password', mode: 'basic', label: 'Wrong password', expected: '401 invalid_credentials' },
  { name: 'no_credentials', mode: 'basic', label: 'No credentials', expected: '401 missing_credentials' },
  { name: 'expired_token', mode: 'oauth2', label: 'Expired token', expected: '401 invalid_token' },
  { name: 'foreign_token', mode: 'oauth2', label: 'Token for another app', expected: '401 invalid_token' },
  { name: 'no_token', mode: 'oauth2', label: 'No token', expected: '401 missing_token' },
  { name: 'oversize', mode: 'secret', label: 'One byte over the size limit', expected: '413 payload_too_large' },
  { name: 'oversize', mode: 'basic', label: 'One byte over the size limit', expected: '413 payload_too_large' },
  { name: 'oversize', mode: 'oauth2', label: 'One byte over the size limit', expected: '413 payload_too_large' },
  { name: 'oversize', mode: 'none', label: 'One byte over the size limit', expected: '413 payload_too_large' },
]

/** A preset that cannot break what it names on the body given: said to the page, nothing sent. */
export class PresetNotApplicable extends Error {}

export function presetsFor(mode: InspectorSettings['auth']['mode']): Preset[] {
  return PRESETS.filter((preset) => preset.mode === mode)
}

const JSON_TYPE: [string, string] = ['content-type', 'application/json; charset=utf-8']

/**
 * Builds the request a preset sends: `body` signed (or authenticated) correctly except for the
 * one thing the preset breaks.
 */
export async function presetRequest(settings: InspectorSettings, name: string, path: string, text: string): Promise<RawRequest> {
  const { auth, signatureHeader } = settings
  let body: Uint8Array = new TextEncoder().encode(text)
  const headers: [string, string][] = [JSON_TYPE]
  let url = path
  if (name === 'oversize') {
    // A JSON body exactly one byte over the limit, authenticated correctly: only its size is wrong.
    const frame = '{"padding":""}'
    body = new TextEncoder().encode(`{"padding":"${'x'.repeat(settings.maxBodySize + 1 - frame.length)}"}`)
  }
  const firstSecret = settings.secrets[0] as string
  switch (name) {
    case 'wrong_secret':
      headers.push([signatureHeader, await sign(body, `wrong-${randomBytes(8).toString('hex')}`)])
      break
    case 'secret_newline':
      headers.push([signatureHeader, await sign(body, `${firstSecret}\n`)])
      break
    case 'gson_body': {
      // The signature covers the text as written; the body sent is what Gson would have made of it.
      const escaped = escapeLikeGson(body)
      if (escaped === undefined) {
        throw new PresetNotApplicable(
          "This body holds no character Gson escapes (< > & = ' in a string): as sent it is what was signed, and would be verified. Add one.",
        )
      }
      headers.push([signatureHeader, await sign(body, firstSecret)])
      body = escaped
      break
    }
    case 'header_not_hex':
      headers.push([signatureHeader, 'z'.repeat(64)])
      break
    case 'header_short':
      headers.push([signatureHeader, (await sign(body, firstSecret)).slice(0, 40)])
      break
    case 'no_header':
      break
    case 'wrong_password':
      if (auth.mode === 'basic') headers.push(['authorization', formatBasicAuthorization(auth.username, `${auth.password}-wrong`)])
      break
    case 'no_credentials':
    case 'no_token':
      break
    case 'expired_token':
    case 'foreign_token': {
      if (auth.mode !== 'oauth2') break
      // Issued by a receiver of its own: three hours ago with the same settings, or now for another app.
      const foreign = { appId: 'another-app', secret: randomBytes(24).toString('hex') }
      const issuer =
        name === 'expired_token'
          ? createReceiver({ auth: { mode: 'oauth2', appId: auth.appId, secret: auth.secret }, clock: () => Date.now() - 3 * 3600_000 })
          : createReceiver({ auth: { mode: 'oauth2', ...foreign } })
      const asked = name === 'expired_token' ? { appId: auth.appId, secret: auth.secret } : foreign
      url = withToken(path, await issueToken(issuer, asked.appId, asked.secret))
      break
    }
    case 'oversize':
      if (auth.mode === 'secret') headers.push([signatureHeader, await sign(body, firstSecret)])
      if (auth.mode === 'basic') headers.push(['authorization', formatBasicAuthorization(auth.username, auth.password)])
      if (auth.mode === 'oauth2') {
        const issuer = createReceiver({ auth: { mode: 'oauth2', appId: auth.appId, secret: auth.secret } })
        url = withToken(path, await issueToken(issuer, auth.appId, auth.secret))
      }
      break
    default:
      throw new TypeError(`@hookguard/inspect: unknown preset ${name}`)
  }
  return { method: 'POST', url, headers, body }
}

async function issueToken(issuer: ReturnType<typeof createReceiver>, appId: string, secret: string): Promise<string> {
  const query = new URLSearchParams({ appid: appId, secret, grant_type: 'client_credentials' })
  const answer = await issuer.token({ method: 'GET', url: `/token?${query}`, headers: {}, body: undefined })
  const { access_token } = JSON.parse(answer.body) as { access_token?: string }
  if (access_token === undefined) throw new Error('@hookguard/inspect: the preset could not issue its token')
  return access_token
}

function withToken(path: string, token: string): string {
  const url = new URL(path, 'http://localhost')
  url.searchParams.set('access_token', token)
  return `${url.pathname}${url.search}`
}
