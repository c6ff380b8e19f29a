import type { IncomingMessage, ServerResponse } from 'node:http'
import { disagree } from './disagreement.ts'
import { createForwarder } from './forward.ts'
import type { Judge, Judgement } from './judge.ts'
import type { InspectorSettings } from './options.ts'
import { headerValue, pairs, withoutHeader } from './raw-headers.ts'
import type { AppAnswer, InspectedRecord, RecordSource } from './record.ts'
import { pathOnly, presentedToken, tokenHash } from './redact.ts'
import { captureBody } from './request-body.ts'

/** Marks a request the page made (a replay, a resend, a preset), so its row says so. Removed before forwarding. */
export const SOURCE_HEADER = 'x-hookguard-inspect-source'
const SOURCES = new Set<RecordSource>(['replay', 'resend', 'preset'])

/** The code recorded, and answered, for a request whose body did not arrive in time. */
export const REQUEST_TIMEOUT = 'request_timeout'

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

/**
 * The path and query of a request target. An absolute-form target (`POST http://host/x HTTP/1.1`,
 * as a client sends to a proxy) keeps only those, as written: it is forwarded, recorded and
 * exported as a path.
 */
export function originForm(target: string): string {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(target)
  if (authority === null) return target
  const rest = target.slice(authority[0].length).replace(/#.*$/, '')
  return rest.startsWith('/') ? rest : `/${rest}`
}

/**
 * The handler of the receiving address: in front of an app, forwards each request unchanged and
 * hands the app's answer back; otherwise answers as hookguard would. Either way the request and
 * hookguard's verdict become a record.
 */
export function createCaptureHandler(context: CaptureContext) {
  const { settings, judge } = context
  const forwarder = settings.forwardTo === undefined ? undefined : createForwarder(settings, settings.forwardTo)

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
    const url = originForm(req.url ?? '/')
    const method = req.method ?? 'GET'
    const sourceValue = headerValue(req.rawHeaders, SOURCE_HEADER)
    const [sourceName = '', presetKey] = (sourceValue ?? '').split(';')
    const source: RecordSource = SOURCES.has(sourceName as RecordSource) ? (sourceName as RecordSource) : 'sender'
    const rawHeaders = withoutHeader(req.rawHeaders, SOURCE_HEADER)
    const isToken = settings.auth.mode === 'oauth2' && pathOnly(url) === settings.tokenPath
    const capture = captureBody(req, settings.maxBodySize, settings.bodyTimeoutMs)

    const forwarding = forwarder?.forward(req, res, url, rawHeaders)
    const ended = await capture.done
    if (ended === 'timeout') {
      // Unless the app's answer is under way: then it goes out, and the connection closes after it.
      const ours = forwarding === undefined || forwarding.cancel()
      timedOut(req, res, ours)
    }
    // In front of an app, its answer goes back to the sender first: hookguard's verdict is for the
    // page, and computing it must not delay the delivery (bench/inspect.ts measures what it adds).
    const app = forwarding === undefined ? undefined : await forwarding.answer
    if (app !== undefined) await new Promise((resolve) => setImmediate(resolve))
    const { body, truncated, total } = capture.result()
    const captured = { method, url, rawHeaders, body, truncated }
    // A body cut short by its time gets no verdict: it is not what the sender meant to send.
    const judgement: Judgement =
      ended === 'timeout'
        ? { verdict: 'refused', response: timeoutAnswer(settings.bodyTimeoutMs), code: REQUEST_TIMEOUT }
        : isToken
          ? await judge.token(captured)
          : await judge.delivery(captured)

    if (forwarding === undefined && ended !== 'timeout') {
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
    if (app !== undefined) addApp(record, judgement, app)
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

  /** The sender's body ran out of time: 408, and the connection closed once the answer is out (the rest is never read). */
  function timedOut(req: IncomingMessage, res: ServerResponse, answer: boolean): void {
    if (answer && !res.headersSent) {
      const { status, headers, body } = timeoutAnswer(settings.bodyTimeoutMs)
      res.writeHead(status, { ...headers, connection: 'close' }).end(body)
      return
    }
    if (res.writableFinished) req.socket.destroySoon()
    else res.once('finish', () => req.socket.destroySoon())
  }

  return Object.assign(handler, { close: () => forwarder?.close() })
}

function timeoutAnswer(ms: number): Judgement['response'] {
  return {
    status: 408,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
    body: JSON.stringify({ error: REQUEST_TIMEOUT, message: `The request's body did not arrive within ${ms} ms.` }),
  }
}

function addApp(record: InspectedRecord, judgement: Judgement, app: AppAnswer): void {
  record.app = app
  if (app.code === 'duplicate_in_progress') record.duplicate = 'processing'
  // A request whose body never ended has no verdict to disagree with.
  const disagreement = judgement.code === REQUEST_TIMEOUT ? undefined : disagree(judgement, app)
  if (disagreement !== undefined) record.disagreement = disagreement
}

function issuedToken(text: string): string | undefined {
  try {
    const { access_token } = JSON.parse(text) as { access_token?: unknown }
    return typeof access_token === 'string' ? access_token : undefined
  } catch {
    return undefined
  }
}
