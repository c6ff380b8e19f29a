import { fetchApp } from '@hookguard/conformance/fetch-app'
import { honoApp } from '@hookguard/conformance/hono-app'
import type { StripperKind } from '@hookguard/core/adapter'
import { sendToFetch } from '@hookguard/testkit/fetch'
import { type Build, checkBodyStillReadable, checkBuild, checkClient, checkCore, checkSetup } from './checks.ts'
import { Tally } from './reply.ts'
import { checkStripper } from './stripper.ts'
import { inProcessRows, runTable } from './table.ts'

export interface PortableRun {
  /** The core build this runtime is expected to load. */
  build: Build
  /** That build, imported by its file path. */
  reference: { sign?: unknown } | undefined
  /** The emulator's `mockService`, for the client. */
  mockUrl: string | undefined
  /** Which stripper that build must use on this runtime. */
  stripper: StripperKind
}

/** Everything that runs inside one runtime: the build it loaded, its stripper, the core, setup checks, the table against Hono and the fetch handler in process, the client. */
export async function runPortable({ build, reference, mockUrl, stripper }: PortableRun, tally = new Tally()): Promise<Tally> {
  await checkBuild(tally, build, reference)
  await checkStripper(tally, stripper)
  await checkCore(tally)
  await checkSetup(tally)
  await runTable(
    tally,
    'hono (app.request)',
    (_id, options) => {
      const { app, handled } = honoApp(options)
      return { send: (outgoing) => sendToFetch(app.request, outgoing), handled }
    },
    inProcessRows,
  )
  await runTable(
    tally,
    'fetch handler (in process)',
    (_id, options) => {
      const { fetch, handled } = fetchApp(options)
      const request = (path: string, init: RequestInit) => fetch(new Request(new URL(path, 'http://localhost'), init))
      return { send: (outgoing) => sendToFetch(request, outgoing), handled }
    },
    inProcessRows,
  )
  await checkBodyStillReadable(tally)
  await checkClient(tally, mockUrl)
  return tally
}
