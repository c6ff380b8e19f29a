import { Agent, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Judge, Judgement } from './judge.ts'
import type { InspectorSettings } from './options.ts'
import { type AppAnswer, type InspectedRecord, MAX_RECORDED_ANSWER, type RecordSource } from './record.ts'
import { pathOnly, presentedToken, tokenHash } from './redact.ts'

/**
 * RFC 9110 §7.6.1: the headers that describe one connection, not the message; a proxy drops them,
 * and every header the `Connection` header names.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
])

/** Marks a request the page made (a replay, a resend, a preset), so its row says so. Removed before forwarding. */
export const SOURCE_HEADER = 'x-hookguard-inspect-source'
const SOURCES = new Set<RecordSource>(['replay', 'resend', 'preset'])

export interface CaptureContext {
  settings: InspectorSettings
  judge: Judge
  nextId(): number
  /** Finds the token request that issued a token, by its hash. */
  tokenRequest(hash: string): InspectedRecord | undefined
  /** The first verified delivery with this fingerprint, if any. */
  firstWith(fingerprint: string, before: number): InspectedRecord | undefined
  complete(record: InspectedRecord): void
  /** Presets: what was broken, keyed by the id their request carries. */
  takePreset(key: string): InspectedRecord['preset'] | undefined
}

/** Reads a request's body as it streams: the first `limit` bytes kept, the rest only counted. */
function captureBody(req: IncomingMessage, limit: number) {
  const chunks: Buffer[] = []
  let kept = 0
  let total = 0
  const done = new Promise<void>((resolve) => {
    req.on('data', (chunk: Buffer) => {
      total += chunk.byteLength
      if (kept >= limit + 1) return
      const room = limit + 1 - kept
      const part = chunk.byteLength <= room ? chunk : chunk.subarray(0, room)
      chunks.push(part)
      kept += part.byteLength
    })
    req.once('end', resolve)
    // A sender that goes away mid-body: what arrived is what is recorded.
    req.once('close', resolve)
    req.once('error', () => resolve())
  })
  return {
    done,
    result() {
      const all = Buffer.concat(chunks)
      const truncated = all.byteLength > limit
      return { body: new Uint8Array(truncated ? all.subarray(0, limit) : all), truncated, total }
    },
  }
}

/**
 * The handler of the receiving address: in front of an app, forwards each request unchanged and
 * hands the app's answer back; otherwise answers as hookguard would. Either way the request and
 * hookguard's verdict become a record.
 */
export function createCaptureHandler(context: CaptureContext) {
  const { settings, judge } = context
  const target = settings.forwardTo
  // Kept-alive connections to the app: a new connection per delivery would be most of the overhead.
  const agent = new Agent({ keepAlive: true, maxSockets: 64 })
  const targetPath = target === undefined ? '' : target.pathname.replace(/\/$/, '')

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    void handle(req, res).catch((error: unknown) => {
      // Never the request: it may carry credentials.
      console.error('@hookguard/inspect: a request could not be recorded:', (error as Error).message)
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' })
      res.end('{"error":"inspector_error","message":"The inspector failed to handle this request."}')
    })
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now()
    const time = Date.now()
    const url = req.url ?? '/'
    const method = req.method ?? 'GET'
    const sourceValue = headerValue(req.rawHeaders, SOURCE_HEADER)
    const [sourceName = '', presetKey] = (sourceValue ?? '').split(';')
    const source: RecordSource = SOURCES.has(sourceName as RecordSource) ? (sourceName as RecordSource) : 'sender'
    const rawHeaders = withoutHeader(req.rawHeaders, SOURCE_HEADER)
    const isToken = settings.auth.mode === 'oauth2' && pathOnly(url) === settings.tokenPath
    const capture = captureBody(req, settings.maxBodySize)

    const forwarded = target === undefined ? undefined : forward(req, res, url, rawHeaders)
    await capture.done
    // In front of an app, its answer goes back to the sender first: hookguard's verdict is for the
    // page, and computing it must not delay the delivery (bench/inspect.ts measures what it adds).
    const app = forwarded === undefined ? undefined : await forwarded
    if (app !== undefined) await new Promise((resolve) => setImmediate(resolve))
    const { body, truncated, total } = capture.result()
    const captured = { method, url, rawHeaders, body, truncated }
    const judgement: Judgement = isToken ? await judge.token(captured) : await judge.delivery(captured)

    if (forwarded === undefined) {
      const { status, headers, body: answer } = judgement.response
      // A body left unread past the limit: the connection is closed rather than reused.
      res.writeHead(status, truncated ? { ...headers, connection: 'close' } : headers).end(answer)
      if (truncated) req.resume()
    }

    const id = context.nextId()
    const headers = pairs(rawHeaders)
    const record: InspectedRecord = {
      id,
      kind: isToken ? 'token' : 'delivery',
      time,
      source,
      method,
      url,
      headers,
      body,
      bodyBytes: total,
      mode: settings.auth.mode,
      verdict: judgement.verdict,
      status: judgement.response.status,
      durationMs: performance.now() - started,
    }
    if (judgement.code !== undefined) record.code = judgement.code
    if (judgement.hint !== undefined) record.hint = judgement.hint
    if (judgement.form !== undefined) record.form = judgement.form
    if (judgement.fingerprint !== undefined) record.fingerprint = judgement.fingerprint
    if (judgement.diagnosis !== undefined) record.diagnosis = judgement.diagnosis
    if (judgement.duplicate !== undefined) record.duplicate = judgement.duplicate
    if (app !== undefined) {
      record.app = app
      if (app.code === 'duplicate_in_progress') record.duplicate = 'processing'
      const disagreement = disagree(judgement, app)
      if (disagreement !== undefined) record.disagreement = disagreement
    }
    if (isToken) {
      const answerText = app === undefined ? judgement.response.body : app.status === 200 ? new TextDecoder().decode(app.body) : undefined
      const token = answerText === undefined ? undefined : issuedToken(answerText)
      if (token !== undefined) record.tokenHash = tokenHash(token)
    } else if (settings.auth.mode === 'oauth2') {
      const token = presentedToken(url, headers, body)
      if (token !== undefined) {
        record.tokenHash = tokenHash(token)
        const issuer = context.tokenRequest(record.tokenHash)
        if (issuer !== undefined) record.tokenId = issuer.id
      }
    }
    if (record.fingerprint !== undefined) {
      const first = context.firstWith(record.fingerprint, id)
      if (first !== undefined) record.repeatOf = first.id
    }
    if (source === 'preset' && presetKey !== undefined) {
      const preset = context.takePreset(presetKey)
      if (preset !== undefined) record.preset = preset
    }
    context.complete(record)
  }

  /** Sends the request on to the app as it streams in, and the app's answer back as it streams out. */
  function forward(req: IncomingMessage, res: ServerResponse, url: string, rawHeaders: readonly string[]): Promise<AppAnswer> {
    const started = performance.now()
    const to = target as URL
    return new Promise<AppAnswer>((resolve) => {
      const upstream = httpRequest({
        host: to.hostname.replace(/^\[|\]$/g, ''),
        port: to.port === '' ? 80 : Number(to.port),
        method: req.method,
        path: `${targetPath}${url}`,
        // The sender's headers as they came, Host included; Node adds the framing of its own.
        headers: endToEnd(rawHeaders),
        setHost: false,
        agent,
      })
      let settled = false
      const answer = (result: AppAnswer) => {
        if (settled) return
        settled = true
        resolve(result)
      }
      const failed = (error: 'unreachable' | 'timeout', detail: string) => {
        req.unpipe(upstream)
        upstream.destroy()
        if (!res.headersSent) {
          const status = error === 'timeout' ? 504 : 502
          const message =
            error === 'timeout'
              ? `The app at ${to.host} did not answer within ${settings.forwardTimeoutMs} ms.`
              : `The app at ${to.host} could not be reached (${detail}).`
          res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', connection: 'close' })
          res.end(JSON.stringify({ error: error === 'timeout' ? 'forward_timeout' : 'forward_failed', message }))
          // Whatever the sender still sends is read and dropped, so that it reads the answer.
          req.resume()
        } else res.destroy()
        answer({ headers: [], body: new Uint8Array(0), error, durationMs: performance.now() - started })
      }
      upstream.setTimeout(settings.forwardTimeoutMs, () => failed('timeout', 'timeout'))
      upstream.on('error', (error: NodeJS.ErrnoException) => failed('unreachable', error.code ?? 'error'))
      upstream.on('response', (up) => {
        const chunks: Buffer[] = []
        let kept = 0
        const upHeaders = endToEnd(up.rawHeaders)
        res.writeHead(up.statusCode ?? 502, up.statusMessage, upHeaders)
        up.on('data', (chunk: Buffer) => {
          if (kept >= MAX_RECORDED_ANSWER) return
          const part = chunk.subarray(0, MAX_RECORDED_ANSWER - kept)
          chunks.push(part)
          kept += part.byteLength
        })
        up.pipe(res)
        const finish = () => {
          const body = new Uint8Array(Buffer.concat(chunks))
          const status = up.statusCode ?? 502
          const code = errorCode(body)
          answer({
            status,
            headers: pairs(upHeaders),
            body,
            ...(code !== undefined && { code }),
            durationMs: performance.now() - started,
          })
        }
        up.once('end', finish)
        up.once('close', finish)
      })
      // The sender gave up: so does the request to the app.
      res.once('close', () => {
        if (!res.writableFinished) upstream.destroy()
      })
      req.pipe(upstream)
    })
  }

  return Object.assign(handler, { close: () => agent.destroy() })
}

/** The app and hookguard disagree: the app took what hookguard refuses, or refused what it verifies. */
function disagree(judgement: Judgement, app: AppAnswer): InspectedRecord['disagreement'] {
  if (app.status === undefined) return undefined
  if (judgement.verdict === 'refused' && app.status >= 200 && app.status < 300) return 'app_accepted'
  // A duplicate in progress and a payload the app's schema refuses are the app's own business.
  const ownBusiness = app.code === 'duplicate_in_progress' || app.code === 'invalid_payload'
  if (judgement.verdict === 'verified' && judgement.duplicate === undefined && app.status >= 400 && app.status < 500 && !ownBusiness) {
    return 'app_refused'
  }
  return undefined
}

function issuedToken(text: string): string | undefined {
  try {
    const { access_token } = JSON.parse(text) as { access_token?: unknown }
    return typeof access_token === 'string' ? access_token : undefined
  } catch {
    return undefined
  }
}

/** The `error` of a JSON refusal, when it looks like a code. */
function errorCode(body: Uint8Array): string | undefined {
  if (body.byteLength === 0 || body.byteLength > 16 * 1024) return undefined
  try {
    const { error } = JSON.parse(new TextDecoder().decode(body)) as { error?: unknown }
    return typeof error === 'string' && /^[a-z_]{1,64}$/.test(error) ? error : undefined
  } catch {
    return undefined
  }
}

function endToEnd(rawHeaders: readonly string[]): string[] {
  const named = new Set<string>()
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if ((rawHeaders[i] as string).toLowerCase() !== 'connection') continue
    for (const name of (rawHeaders[i + 1] as string).split(',')) named.add(name.trim().toLowerCase())
  }
  const out: string[] = []
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase()
    if (HOP_BY_HOP.has(name) || named.has(name)) continue
    out.push(rawHeaders[i] as string, rawHeaders[i + 1] as string)
  }
  return out
}

function withoutHeader(rawHeaders: readonly string[], name: string): string[] {
  const out: string[] = []
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if ((rawHeaders[i] as string).toLowerCase() === name) continue
    out.push(rawHeaders[i] as string, rawHeaders[i + 1] as string)
  }
  return out
}

function headerValue(rawHeaders: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) if ((rawHeaders[i] as string).toLowerCase() === name) return rawHeaders[i + 1]
  return undefined
}

function pairs(rawHeaders: readonly string[]): [string, string][] {
  const out: [string, string][] = []
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) out.push([rawHeaders[i] as string, rawHeaders[i + 1] as string])
  return out
}
