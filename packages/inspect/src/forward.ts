import { Agent, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import { gatheredPieces } from './gather.ts'
import type { InspectorSettings } from './options.ts'
import { endToEnd, pairs } from './raw-headers.ts'
import { type AppAnswer, MAX_RECORDED_ANSWER } from './record.ts'

/** A request on its way to the app; `answer` resolves with the app's answer, once it is complete or has failed. */
export interface Forwarding {
  /** `undefined` when the forwarding was cancelled before the app answered. */
  answer: Promise<AppAnswer | undefined>
  /**
   * The sender's request will not complete (its body ran out of time): the app is not sent the
   * rest. `true` when the app had not answered, and the caller answers the sender; `false` when
   * the app's answer is under way, and goes on, within its own timeout.
   */
  cancel(): boolean
}

/**
 * Sends requests on to the app as they stream in, and its answers back. The app has
 * `forwardTimeoutMs` for its whole answer, counted from when it has the whole request (or answers
 * before): an app that sends its headers and then trickles its body is cut off like one that
 * never answers. An answer is held until it is complete, up to {@link MAX_RECORDED_ANSWER} bytes,
 * so that the sender of one cut off gets a 504 rather than an answer cut short; a larger one is
 * streamed, and cut off by closing the connection.
 */
export function createForwarder(settings: InspectorSettings, target: URL) {
  // Kept-alive connections to the app: a new connection per delivery would be most of the overhead.
  const agent = new Agent({ keepAlive: true, maxSockets: 64 })
  const targetPath = target.pathname.replace(/\/$/, '')
  const timeoutMs = settings.forwardTimeoutMs

  function forward(req: IncomingMessage, res: ServerResponse, url: string, rawHeaders: readonly string[]): Forwarding {
    const started = performance.now()
    let settled = false
    let deadline: NodeJS.Timeout | undefined
    let resolveAnswer: (answer: AppAnswer | undefined) => void = () => {}
    const answer = new Promise<AppAnswer | undefined>((resolve) => {
      resolveAnswer = resolve
    })
    const settle = (result: AppAnswer | undefined) => {
      if (settled) return
      settled = true
      clearTimeout(deadline)
      resolveAnswer(result)
    }

    const upstream = httpRequest({
      host: target.hostname.replace(/^\[|\]$/g, ''),
      port: target.port === '' ? 80 : Number(target.port),
      method: req.method,
      path: `${targetPath}${url}`,
      // The sender's headers as they came, Host included; Node adds the framing of its own.
      headers: endToEnd(rawHeaders),
      setHost: false,
      agent,
    })
    let responding = false
    const body = gatheredPieces()
    const stopSending = () => {
      req.unpipe(body)
      body.unpipe(upstream)
    }

    const failed = (error: 'unreachable' | 'timeout') => {
      if (settled) return
      stopSending()
      upstream.destroy()
      if (!res.headersSent) {
        const status = error === 'timeout' ? 504 : 502
        // The sender is the webhook service: it is told what failed, not the app's address or the
        // error's name (the page and the terminal show where the inspector forwards to).
        const message = error === 'timeout' ? `The app did not answer within ${timeoutMs} ms.` : 'The app could not be reached.'
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', connection: 'close' })
        res.end(JSON.stringify({ error: error === 'timeout' ? 'forward_timeout' : 'forward_failed', message }))
        // Whatever the sender still sends is read and dropped, so that it reads the answer.
        req.resume()
      } else res.destroy()
      settle({ headers: [], body: new Uint8Array(0), error, durationMs: performance.now() - started })
    }
    const startDeadline = () => {
      deadline ??= setTimeout(() => failed('timeout'), timeoutMs)
    }
    upstream.once('finish', startDeadline)
    // An app that stops reading the request: no activity on the connection for as long.
    upstream.setTimeout(timeoutMs, () => failed('timeout'))
    upstream.on('error', () => failed('unreachable'))
    upstream.on('response', (up) => {
      responding = true
      startDeadline()
      const status = up.statusCode ?? 502
      const upHeaders = endToEnd(up.rawHeaders)
      const recorded: Buffer[] = []
      let recordedBytes = 0
      const held: Buffer[] = []
      let heldBytes = 0
      let passing = false
      const passOn = () => {
        passing = true
        res.writeHead(status, up.statusMessage, upHeaders)
        for (const chunk of held.splice(0)) res.write(chunk)
      }
      up.on('data', (chunk: Buffer) => {
        if (settled) return
        if (recordedBytes < MAX_RECORDED_ANSWER) {
          const part = chunk.subarray(0, MAX_RECORDED_ANSWER - recordedBytes)
          recorded.push(part)
          recordedBytes += part.byteLength
        }
        if (!passing) {
          held.push(chunk)
          heldBytes += chunk.byteLength
          if (heldBytes > MAX_RECORDED_ANSWER) passOn()
          return
        }
        if (!res.write(chunk)) {
          up.pause()
          res.once('drain', () => up.resume())
        }
      })
      up.once('end', () => {
        if (settled) return
        if (passing) res.end()
        else if (!res.headersSent) res.writeHead(status, up.statusMessage, upHeaders).end(Buffer.concat(held))
        const body = new Uint8Array(Buffer.concat(recorded))
        const { code, jobId } = answerFacts(body, status)
        settle({
          status,
          headers: pairs(upHeaders),
          body,
          ...(code !== undefined && { code }),
          ...(jobId !== undefined && { jobId }),
          durationMs: performance.now() - started,
        })
      })
      // Reported by `close` below, whose `complete` says whether the answer was whole.
      up.on('error', () => {})
      up.once('close', () => {
        if (!up.complete) failed('unreachable')
      })
    })
    // The sender gave up: so does the request to the app.
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy()
    })
    req.pipe(body).pipe(upstream)

    return {
      answer,
      cancel() {
        if (settled) return !res.headersSent
        stopSending()
        if (responding) return false
        settled = true
        clearTimeout(deadline)
        upstream.destroy()
        resolveAnswer(undefined)
        return true
      },
    }
  }

  return { forward, close: () => agent.destroy() }
}

/**
 * What the app's JSON answer says, when it says it in hookguard's words: the `error` code of a
 * refusal, or the job id of a delivery it handed off to a queue (`{ "queued": true, "jobId" }`).
 * Both are the app's text, so each is taken only when it looks like what it claims to be.
 */
function answerFacts(body: Uint8Array, status: number): { code?: string; jobId?: string } {
  if (body.byteLength === 0 || body.byteLength > 16 * 1024) return {}
  try {
    const { error, queued, jobId } = JSON.parse(new TextDecoder().decode(body)) as { error?: unknown; queued?: unknown; jobId?: unknown }
    if (typeof error === 'string' && /^[a-z_]{1,64}$/.test(error)) return { code: error }
    if (status >= 200 && status < 300 && queued === true && typeof jobId === 'string' && /^[\w.:-]{1,128}$/.test(jobId)) return { jobId }
    return {}
  } catch {
    return {}
  }
}
