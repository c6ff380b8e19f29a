import type { IncomingMessage, ServerResponse } from 'node:http'
import { disagree } from './disagreement.ts'
import { createForwarder } from './forward.ts'
import type { Judge, Judgement } from './judge.ts'
import type { InspectorSettings } from './options.ts'
import { droppedByConnection, pairs } from './raw-headers.ts'
import type { AppAnswer, InspectedRecord, RecordSource } from './record.ts'
import { presentedToken, tokenHash } from './redact.ts'
import { captureBody } from './request-body.ts'
import { SOURCE_HEADER, type SourceMark } from './source-mark.ts'
import { pathOnly } from './url-path.ts'

/** The code recorded, and answered, for a request whose body did not arrive in time. */
export const REQUEST_TIMEOUT = 'request_timeout'

export interface CaptureContext {
  settings: InspectorSettings
  judge: Judge
  /** This run's mark on the page's own requests. */
  mark: SourceMark
  /** Reserves room for the request, or answers it 503 and returns `undefined` ({@link Admission}). */
  admit(req: IncomingMessage, res: ServerResponse): (() => void) | undefined
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
    const release = context.admit(req, res)
    if (release === undefined) return
    // The room is held until the record is complete: the body lives in the request until then.
    void handle(req, res)
      .finally(release)
      .catch((error: unknown) => {
        // Never the request: it may carry credentials.
        console.error('@hookguard/inspect: a request could not be recorded:', (error as Error).message)
        if (!res.headersSent) res.writeHead(INSPECTOR_ERROR.status, INSPECTOR_ERROR.headers)
        res.end(INSPECTOR_ERROR.body)
      })
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now()
    const time = Date.now()
    const url = originForm(req.url ?? '/')
    const method = req.method ?? 'GET'
    const { source, presetKey, rawHeaders } = ownMark(req.rawHeaders, context.mark)
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
    let judgement: Judgement
    try {
      judgement =
        ended === 'timeout'
          ? { verdict: 'refused', response: timeoutAnswer(settings.bodyTimeoutMs), code: REQUEST_TIMEOUT }
          : isToken
            ? await judge.token(captured)
            : await judge.delivery(captured)
    } catch {
      // Never expected of the core; if it happens, the request is still answered and recorded, as such.
      judgement = { verdict: 'refused', response: INSPECTOR_ERROR, code: INSPECTOR_ERROR_CODE }
    }

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
    if (forwarding !== undefined) {
      // RFC 9110 §7.6.1: the app is not sent what Connection names; hookguard judged with it.
      const dropped = droppedByConnection(rawHeaders)
      if (dropped.length > 0) record.notForwarded = dropped
    }
    try {
      annotate(record, judgement, app, { isToken, headers, body, url, presetKey: source === 'preset' ? presetKey : undefined })
    } catch {
      // A note the record could not get (a hint, a link, a disagreement) leaves it a record.
      record.annotationFailed = true
    }
    context.complete(record)
  }

  /** What a record says besides the verdict: each part from the request's own bytes, so each may fail on hostile ones. */
  function annotate(
    record: InspectedRecord,
    judgement: Judgement,
    app: AppAnswer | undefined,
    {
      isToken,
      headers,
      body,
      url,
      presetKey,
    }: { isToken: boolean; headers: [string, string][]; body: Uint8Array; url: string; presetKey: string | undefined },
  ): void {
    const { id } = record
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
    if (presetKey !== undefined) {
      const preset = context.takePreset(presetKey)
      if (preset !== undefined) record.preset = preset
    }
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

/**
 * Where the request came from: the page's own mark (this run's secret) is read and taken out; any
 * other copy of the header, a sender's, stays in the request as received.
 */
function ownMark(
  rawHeaders: readonly string[],
  mark: SourceMark,
): { source: RecordSource; presetKey: string | undefined; rawHeaders: readonly string[] } {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if ((rawHeaders[i] as string).toLowerCase() !== SOURCE_HEADER) continue
    const read = mark.read(rawHeaders[i + 1])
    if (read !== undefined)
      return { source: read.source, presetKey: read.key, rawHeaders: [...rawHeaders.slice(0, i), ...rawHeaders.slice(i + 2)] }
  }
  return { source: 'sender', presetKey: undefined, rawHeaders }
}

/** The code recorded, and answered as the receiver, when judging a request failed inside the inspector. */
export const INSPECTOR_ERROR_CODE = 'inspector_error'
const INSPECTOR_ERROR: Judgement['response'] = {
  status: 500,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  body: JSON.stringify({ error: INSPECTOR_ERROR_CODE, message: 'The inspector failed to handle this request.' }),
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
  // A request whose body never ended, or that could not be judged, has no verdict to disagree with.
  const judged = judgement.code !== REQUEST_TIMEOUT && judgement.code !== INSPECTOR_ERROR_CODE
  const disagreement = judged ? disagree(judgement, app) : undefined
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
