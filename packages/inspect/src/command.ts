import { inspectSettings } from './command-options.ts'
import { startInspector } from './inspector.ts'
import type { DeliverFunction } from './options.ts'
import type { InspectedRecord } from './record.ts'
import { terminalLine } from './terminal-text.ts'
import { pathOnly } from './url-path.ts'
import { diagnosisName, jsonLine } from './view.ts'

/** Where the command writes and what it reads: `process.*` fit, and so does a test's buffer. */
export interface InspectIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
  env: Readonly<Record<string, string | undefined>>
  /** The command runs until this aborts (Ctrl-C). */
  signal?: AbortSignal
}

export interface InspectCommandDeps {
  /** `deliver` from `@hookguard/emulator`, for edit-and-resend. */
  deliver?: DeliverFunction
}

/**
 * `hookguard inspect`: runs the inspector until `io.signal` aborts. Resolves the exit code: 0
 * when stopped, 1 when a port cannot be taken. Mistakes on the command line throw a `TypeError`
 * whose message starts with `@hookguard/inspect: `.
 */
export async function inspectCommand(args: readonly string[], io: InspectIo, deps: InspectCommandDeps = {}): Promise<number> {
  const { json, ...settings } = inspectSettings(args, io.env)
  const { forwardTo, host } = settings
  const write = (line: Record<string, unknown>) => io.stdout.write(`${JSON.stringify(line)}\n`)
  const onRecord = (record: InspectedRecord) => {
    if (json) write(jsonLine(record))
    else io.stdout.write(`${describe(record)}\n`)
  }

  let inspector: Awaited<ReturnType<typeof startInspector>>
  try {
    inspector = await startInspector({
      ...settings,
      ...(deps.deliver !== undefined && { deliver: deps.deliver }),
      onRecord,
      onWarning: (message) => io.stderr.write(`${message}\n`),
    })
  } catch (error) {
    if (error instanceof TypeError) throw error
    io.stderr.write(`hookguard: ${cannotListen(error as ListenError, settings)}\n`)
    return 1
  }
  if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1') {
    io.stderr.write(
      `hookguard: warning: listening on ${host}: anyone who can reach it and learns the access token sees every delivery recorded.\n`,
    )
  }
  if (json) write({ type: 'ready', receive: inspector.receiveUrl, ui: inspector.uiUrl })
  else {
    io.stdout.write(
      forwardTo === undefined
        ? `Receiving on ${inspector.receiveUrl}/ and answering as hookguard would.\n`
        : `Receiving on ${inspector.receiveUrl}/ and forwarding to ${forwardTo}.\n`,
    )
    io.stdout.write(`Inspector: ${inspector.uiUrl}\nCtrl-C to stop.\n`)
  }

  await new Promise<void>((resolve) => {
    if (io.signal === undefined) return
    if (io.signal.aborted) resolve()
    else io.signal.addEventListener('abort', () => resolve(), { once: true })
  })
  await inspector.close()
  if (!json) io.stdout.write('Stopped.\n')
  return 0
}

/** Node's listen error: its code, and (documented on SystemError) the address and port it could not take. */
type ListenError = NodeJS.ErrnoException & { address?: string; port?: number }

/** Which port could not be taken, and the flag that sets it: the receiving one is tried first. */
function cannotListen(error: ListenError, { host, port, uiPort }: { host: string; port: number; uiPort: number }): string {
  const code = error.code ?? error.message
  const taken = error.port ?? port
  // The two differ (inspectSettings checks it), or are both 0, which the system never refuses as taken.
  const flag = taken === uiPort && taken !== port ? '--ui-port' : '--port'
  const what = flag === '--port' ? 'the receiving port' : "the page's port"
  const fix = code === 'EADDRINUSE' ? `: another program holds it; choose another with ${flag} <n> (0: any free port)` : ''
  return `cannot listen on ${error.address ?? host}:${taken} (${what}, set by ${flag}): ${code}${fix}`
}

/** One log line: codes and statuses, the path without its query (a token may be in it), never a body. */
function describe(record: InspectedRecord): string {
  const path = terminalLine(pathOnly(record.url)).slice(0, 120)
  const parts = [record.kind === 'token' ? 'token   ' : record.verdict === 'verified' ? 'verified' : 'refused ', `${record.method} ${path}`]
  if (record.code !== undefined) parts.push(record.code)
  if (record.hint !== undefined) parts.push(`hint ${record.hint}`)
  // The variant that would have matched (secret_newline, json_stringify, …): the cause, on the line itself.
  const diagnosis = diagnosisName(record)
  if (diagnosis !== undefined) parts.push(`diagnosis ${diagnosis}`)
  if (record.app?.status !== undefined) parts.push(`app ${record.app.status}`)
  if (record.app?.error !== undefined) parts.push(`app ${record.app.error}`)
  if (record.disagreement !== undefined) parts.push(`DISAGREEMENT ${record.disagreement}`)
  // Header names are tokens (no control character): safe on a terminal as they are.
  if (record.notForwarded !== undefined) parts.push(`not forwarded (named in Connection): ${record.notForwarded.join(', ')}`)
  if (record.annotationFailed !== undefined) parts.push('some notes failed')
  return parts.join('  ')
}
