import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createAdaptorServer } from '@hono/node-server'
import { type Admission, createAdmission } from './admission.ts'
import { createCaptureHandler } from './capture.ts'
import { createJudge } from './judge.ts'
import { checkOptions, type InspectorOptions } from './options.ts'
import type { InspectedRecord } from './record.ts'
import { Ring } from './ring.ts'
import { createSourceMark } from './source-mark.ts'
import { createUiApp } from './ui.ts'
import type { UiEvent } from './ui-context.ts'
import { summarize } from './view.ts'

/** A running inspector. */
export interface Inspector {
  /** Where deliveries are received: `http://127.0.0.1:4319`. */
  receiveUrl: string
  /**
   * The page's address, with this run's access token in its fragment (never sent to a server):
   * the page keeps it in the tab's `sessionStorage` and sends it in an `X-Inspect-Token` header.
   */
  uiUrl: string
  /** The page's access token, expected in an `X-Inspect-Token` header on every API call. */
  accessToken: string
  /** Every record kept, oldest first. */
  records(): InspectedRecord[]
  /** Stops both servers; open page streams are closed. */
  close(): Promise<void>
}

/**
 * Starts the inspector: the receiving address (in front of an app with `forwardTo`, or answering
 * as hookguard would) and the page. Resolves once both listen.
 *
 * @example
 * const inspector = await startInspector({ auth: { mode: 'secret', secret: process.env.HOOKGUARD_SECRET! }, forwardTo: 'http://localhost:3000' })
 * console.log(inspector.uiUrl)
 */
export async function startInspector(options: InspectorOptions): Promise<Inspector> {
  const settings = checkOptions(options)
  const ring = await Ring.open({
    maxRecords: settings.maxRecords,
    maxBytes: settings.maxBytes,
    maxBodySize: settings.maxBodySize,
    onWarning: settings.onWarning,
    ...(settings.save !== undefined && { save: settings.save }),
  })
  const judge = createJudge(settings, settings.forwardTo === undefined)
  const accessToken = settings.accessToken ?? randomBytes(24).toString('base64url')
  const listeners = new Set<(event: UiEvent) => void>()
  const publish = (event: UiEvent) => {
    for (const listener of listeners) listener(event)
  }
  // The first verified delivery of each fingerprint, for "repeat of #n": a lookup, not a scan of
  // the ring per delivery. Bounded like the ring; an id the ring has dropped is no answer.
  const firstByFingerprint = new Map<string, number>()
  const rememberFingerprint = (record: InspectedRecord) => {
    if (record.fingerprint === undefined || record.verdict !== 'verified') return
    const known = firstByFingerprint.get(record.fingerprint)
    if (known !== undefined && ring.get(known) !== undefined) return
    firstByFingerprint.delete(record.fingerprint)
    firstByFingerprint.set(record.fingerprint, record.id)
    if (firstByFingerprint.size > settings.maxRecords * 2) firstByFingerprint.delete(firstByFingerprint.keys().next().value as string)
  }
  // Presets waiting for their request to arrive, by the key the request carries; bounded.
  const presets = new Map<string, { name: string; expected: string }>()

  const mark = createSourceMark()
  let admission: Admission | undefined
  const capture = createCaptureHandler({
    settings,
    judge,
    mark,
    admit: (req, res) => (admission as Admission).admit(req, res),
    nextId: () => ring.nextId(),
    tokenRequest: (hash) => {
      const all = ring.all()
      for (let i = all.length - 1; i >= 0; i--) {
        const record = all[i] as InspectedRecord
        if (record.kind === 'token' && record.tokenHash === hash) return record
      }
      return undefined
    },
    firstWith: (fingerprint, before) => {
      const id = firstByFingerprint.get(fingerprint)
      return id === undefined || id >= before ? undefined : ring.get(id)
    },
    complete: (record) => {
      // Each on its own: a save file that cannot be written, or a listener that throws, takes
      // neither the record from the others nor the process down. Said without the request.
      const step = (what: string, run: () => void) => {
        try {
          run()
        } catch (error) {
          settings.onWarning(`hookguard inspect: record #${record.id}: ${what} failed (${(error as Error)?.name ?? 'error'}).`)
        }
      }
      let evicted: number[] = []
      step('keeping it', () => {
        evicted = ring.add(record)
      })
      step('linking its repeats', () => rememberFingerprint(record))
      step('reporting it', () => settings.onRecord?.(record))
      // Built only for an open page, which lists what the ring keeps: what it dropped goes too.
      if (listeners.size > 0) {
        step('showing it', () => {
          if (evicted.length > 0) publish({ type: 'deleted', ids: evicted })
          publish({ type: 'record', summary: summarize(record) })
        })
      }
    },
    takePreset: (key) => {
      const preset = presets.get(key)
      presets.delete(key)
      return preset
    },
  })

  const receiveServer = createServer(capture)
  // Node keeps a request's first thousand or so header lines and drops the rest unsaid: the record
  // and the app would lose the signature header sent after them. Their bytes stay bounded (431
  // past Node's 16 KiB of head), so every line is kept.
  receiveServer.maxHeadersCount = 0
  admission = createAdmission(receiveServer, settings, (sentence) => settings.onWarning(`hookguard inspect: ${sentence}, not recorded.`))
  let receivePort = 0
  let uiPort = 0
  const urlHost = settings.host === '0.0.0.0' || settings.host === '::' ? '127.0.0.1' : settings.host
  const hostForUrl = urlHost.includes(':') ? `[${urlHost}]` : urlHost
  const app = createUiApp({
    settings,
    ring,
    accessToken,
    mark,
    receiveUrl: () => new URL(`http://${hostForUrl}:${receivePort}`),
    allowedHosts: () => {
      const names = ['127.0.0.1', 'localhost', '[::1]', hostForUrl.toLowerCase()]
      return new Set(names.map((name) => `${name}:${uiPort}`))
    },
    subscribe: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    rememberPreset: (key, preset) => {
      if (presets.size >= 100) presets.delete(presets.keys().next().value as string)
      presets.set(key, preset)
    },
    publish,
  })
  const uiServer = createAdaptorServer({ fetch: app.fetch, overrideGlobalObjects: false }) as Server

  try {
    receivePort = await listen(receiveServer, settings.port, settings.host)
    uiPort = await listen(uiServer, settings.uiPort, settings.host)
  } catch (error) {
    receiveServer.close()
    uiServer.close()
    capture.close()
    throw error
  }

  return {
    receiveUrl: `http://${hostForUrl}:${receivePort}`,
    uiUrl: `http://${hostForUrl}:${uiPort}/#token=${accessToken}`,
    accessToken,
    records: () => ring.all(),
    async close() {
      capture.close()
      admission?.flush()
      await Promise.all(
        [receiveServer, uiServer].map(
          (server) =>
            new Promise<void>((resolve) => {
              server.close(() => resolve())
              server.closeAllConnections()
            }),
        ),
      )
    },
  }
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => reject(error)
    server.once('error', onError)
    server.listen(port, host, () => {
      server.off('error', onError)
      resolve((server.address() as AddressInfo).port)
    })
  })
}
