import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { getRequestListener, type HttpBindings } from '@hono/node-server'
import { DEFAULT_MAX_BODY_SIZE, type WebhookOptions } from '@hookguard/core'
import { tokenEndpoint, type WebhookVariables, webhook } from '@hookguard/hono'
import {
  ADMISSION_OPTIONS,
  type AdmissionSettings,
  admissionSettings,
  type BusyAnswer,
  createAdmission,
  RECEIVER_OPTIONS,
  type ReceiverSettings,
  readOptions,
  receiverSettings,
  terminalLine,
  withDefaults,
} from '@hookguard/inspect/cli'
import { Hono } from 'hono'
import { CommandFailure } from '../failures.ts'
import { type CliIo, painter } from '../io.ts'

const HOST = '127.0.0.1'
const DEFAULT_PORT = 3000

/** Past a bound: `listen` is no inspector, and says so. */
const BUSY: BusyAnswer = { code: 'receiver_busy', subject: 'hookguard listen' }

/**
 * `hookguard listen`'s options: the receiver's and the bounds on what it takes in at once, which it
 * shares with `hookguard inspect`, with its own default port.
 */
export const LISTEN_OPTIONS = { ...withDefaults(RECEIVER_OPTIONS, { port: String(DEFAULT_PORT) }), ...ADMISSION_OPTIONS }

/** `hookguard listen`'s command line and environment, read and checked, as `hookguard inspect` reads them. */
export function listenSettings(args: readonly string[], env: CliIo['env']): ReceiverSettings & AdmissionSettings {
  const values = readOptions(args, LISTEN_OPTIONS, env)
  return { ...receiverSettings(values), ...admissionSettings(values, DEFAULT_MAX_BODY_SIZE) }
}

/** What one line of `listen` reports. */
type Outcome =
  | { kind: 'verified'; event: string | undefined }
  | { kind: 'rejected' | 'token'; code: string; status: number }
  // No answer reached the sender: it closed first, or its body did not arrive in time.
  | { kind: 'aborted' }
  | { kind: 'timed out' }

/** How long a request's body has to arrive whole, from its head: as long as the inspector gives it. */
export const BODY_TIMEOUT_MS = 30_000

/**
 * `hookguard listen`: a receiver with the user's settings, built on `@hookguard/hono` like a real
 * app would be, so what it accepts is what their app will accept. One line per request, until
 * `io.signal` aborts.
 */
export async function listenCommand(args: readonly string[], io: CliIo, { bodyTimeoutMs = BODY_TIMEOUT_MS } = {}): Promise<number> {
  const { auth, port: listenPort, signatureHeader, tokenPath, maxConnections, maxInFlightBytes } = listenSettings(args, io.env)
  const options: WebhookOptions = { auth, signatureHeader }

  const paint = painter(io.stdout, io.env)
  let stopped = false
  const report = (method: string, path: string, outcome: Outcome) => {
    // Connections cut at Ctrl-C are not the sender's doing: nothing is said of them after `Stopped.`.
    if (stopped) return
    const where = paint('dim', `${method} ${printable(path)}`)
    if (outcome.kind === 'verified') {
      io.stdout.write(`${paint('green', 'verified')}  ${where}${outcome.event === undefined ? '' : `  ${printable(outcome.event)}`}\n`)
    } else if (outcome.kind === 'aborted') {
      io.stdout.write(`${paint('yellow', 'aborted ')}  ${where}  the sender closed before its body ended; no answer\n`)
    } else if (outcome.kind === 'timed out') {
      io.stdout.write(
        `${paint('red', 'timeout ')}  ${where}  the body did not arrive within ${bodyTimeoutMs / 1000} s; connection closed\n`,
      )
    } else {
      const label = outcome.kind === 'rejected' ? paint('red', 'rejected') : paint('yellow', 'token   ')
      io.stdout.write(`${label}  ${where}  ${outcome.code} (${outcome.status})\n`)
    }
  }

  // Built before listening, so that settings the middleware refuses fail at startup.
  const timedOut = new WeakSet<IncomingMessage>()
  const app = receiverApp(options, tokenPath, report, (incoming) => (timedOut.has(incoming) ? 'timed out' : 'aborted'))
  const serve = getRequestListener(app.fetch, { overrideGlobalObjects: false })
  // Bounded as the inspector's receiving address is, with the same flags: a sender that opens
  // connections or starts bodies it never finishes gets 503 past the bounds, not the memory, and
  // a body that stops arriving gives its room back after the same time the inspector allows.
  const server = createServer((req, res) => {
    const release = admission.admit(req, res)
    if (release === undefined) return
    const deadline = setTimeout(() => {
      if (req.complete) return
      timedOut.add(req)
      req.destroy()
    }, bodyTimeoutMs)
    deadline.unref()
    req.once('end', () => clearTimeout(deadline))
    res.once('close', () => {
      clearTimeout(deadline)
      release()
    })
    serve(req, res)
  })
  const admission = createAdmission(
    server,
    { maxConnections, maxInFlightBytes, maxBodySize: DEFAULT_MAX_BODY_SIZE, busyAnswer: BUSY },
    (sentence) => io.stderr.write(`hookguard listen: ${sentence}.\n`),
  )
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(new CommandFailure(`cannot listen on ${HOST}:${listenPort}: ${error.code ?? error.message}`))
    })
    server.listen(listenPort, HOST, resolve)
  })
  const { port: actual } = server.address() as AddressInfo
  const base = `http://${HOST}:${actual}`
  io.stdout.write(`Listening on ${base}/ (mode ${auth.mode}); Ctrl-C to stop.\n`)
  if (auth.mode === 'oauth2') io.stdout.write(`Token address: ${base}${tokenPath}\n`)

  await aborted(io.signal)
  admission.flush()
  stopped = true
  await new Promise<void>((resolve) => {
    server.close(() => resolve())
    // Keep-alive connections would otherwise hold the process open after Ctrl-C.
    server.closeAllConnections()
  })
  io.stdout.write('Stopped.\n')
  return 0
}

function receiverApp(
  options: WebhookOptions,
  tokenPath: string,
  report: (method: string, path: string, outcome: Outcome) => void,
  unanswered: (incoming: IncomingMessage) => 'aborted' | 'timed out',
): Hono<{ Bindings: HttpBindings; Variables: Partial<WebhookVariables> }> {
  // Partial: this outer middleware runs on every route, and webhook() has set a delivery only on
  // the ones it verified.
  const app = new Hono<{ Bindings: HttpBindings; Variables: Partial<WebhookVariables> }>()
  const oauth = options.auth.mode === 'oauth2'

  // Outermost, so it sees the answer whoever gave it: the handler below, or the middleware
  // refusing the request before the handler runs.
  app.use('*', async (c, next) => {
    await next()
    const { method, path } = c.req
    const token = oauth && path === tokenPath
    if (!token && method !== 'POST') return
    // The refusal of a body that broke off went nowhere: the line says what happened instead.
    if (!c.env.incoming.complete) {
      report(method, path, { kind: unanswered(c.env.incoming) })
      return
    }
    if (token) {
      report(method, path, { kind: 'token', code: c.res.ok ? 'issued' : await errorCode(c.res), status: c.res.status })
      return
    }
    const delivery = c.get('webhook')
    if (delivery !== undefined) {
      const payload = delivery.payload as { event?: unknown } | null
      report(method, path, { kind: 'verified', event: typeof payload?.event === 'string' ? payload.event : undefined })
    } else {
      report(method, path, { kind: 'rejected', code: await errorCode(c.res), status: c.res.status })
    }
  })
  // The path compared as it is, not as a route pattern (where `:` and `*` mean more), as the
  // line above reports it and as `inspect` matches it.
  if (oauth) {
    const token = tokenEndpoint(options)
    app.use('*', (c, next) => (c.req.path === tokenPath ? token(c) : next()))
  }
  app.post('*', webhook(options), (c) => c.json({ received: true }))
  return app
}

/** The `error` code of a refusal's JSON body, or `error` when it has none (a crash, a 404). */
async function errorCode(response: Response): Promise<string> {
  try {
    const body = (await response.clone().json()) as { error?: unknown }
    if (typeof body.error === 'string' && /^[a-z_]{1,64}$/.test(body.error)) return body.error
  } catch {
    // Not JSON: fall through.
  }
  return 'error'
}

/** Text from the request, safe for a terminal (see terminalLine), its length capped. */
function printable(text: string): string {
  const clean = terminalLine(text)
  return clean.length > 120 ? `${clean.slice(0, 119)}…` : clean
}

function aborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal === undefined) return
    if (signal.aborted) resolve()
    else signal.addEventListener('abort', () => resolve(), { once: true })
  })
}
