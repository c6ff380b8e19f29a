import { DEFAULT_MAX_BODY_SIZE, DEFAULT_SIGNATURE_HEADER } from '@hookguard/core'
import {
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_FORWARD_TIMEOUT_MS,
  DEFAULT_HOST,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_IN_FLIGHT_BYTES,
  DEFAULT_PORT,
  DEFAULT_TOKEN_PATH,
  DEFAULT_UI_PORT,
} from './defaults.ts'
import type { InspectedRecord } from './record.ts'
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_RECORDS } from './ring.ts'

/** The settings hookguard verifies with: the app's own, so that the two verdicts can be compared. */
export type InspectAuth =
  | { mode: 'secret'; secret: string | readonly string[]; unicodeWhitespace?: boolean }
  | { mode: 'basic'; username: string; password: string }
  | { mode: 'oauth2'; appId: string; secret: string }
  | { mode: 'none' }

/** What a resend needs from the emulator: `deliver` from `@hookguard/emulator`, passed in so that neither package imports the other. */
export type DeliverFunction = (
  options: {
    url: string | URL
    payload: unknown
    fetch?: typeof fetch
    signal?: AbortSignal
  } & (
    | { mode: 'secret'; secret: string; signatureHeader?: string }
    | { mode: 'basic'; username: string; password: string }
    | { mode: 'oauth2'; tokenUrl: string | URL; appId: string; appSecret: string }
    | { mode: 'none' }
  ),
) => Promise<{ status: number; headers: Record<string, string>; body: string }>

export interface InspectorOptions {
  auth: InspectAuth
  /** The app to put the inspector in front of (`http://localhost:3000`). Without it, the inspector answers as hookguard would. */
  forwardTo?: string
  /** Where deliveries are received. Default 4319; 0 picks a free port. */
  port?: number
  /** Where the page is served. Default 4320; 0 picks a free port. */
  uiPort?: number
  /** Default `127.0.0.1`. Anything else exposes the inspector's recordings to that network: the command warns. */
  host?: string
  /** An NDJSON file the records are kept in and reloaded from. */
  save?: string
  /** Default 1 MiB, as the receiver's. */
  maxBodySize?: number
  /** Default `X-Service-Hmac-Signature`. */
  signatureHeader?: string
  /** Mode `oauth2`: the token acquisition address's path. Default `/token`. */
  tokenPath?: string
  /**
   * How long the app may take to answer, its whole answer, from when it has the whole request,
   * before the sender gets 504 (or, once more than 64 KiB of it has been passed on, the connection
   * is closed). Default 30 s.
   */
  forwardTimeoutMs?: number
  /** How long a request's body may take to arrive, from its headers, before the sender gets 408 and the connection is closed. Default 30 s. */
  bodyTimeoutMs?: number
  /**
   * Requests the receiving address serves at once. One past it is answered 503 `inspector_busy`
   * (with `Connection: close` and `Retry-After`). At most twice it connections are open: past that,
   * a new one takes the place of the oldest with no request in progress (or is closed, when every
   * one has a request in progress). Default 128.
   */
  maxConnections?: number
  /**
   * Bytes of request bodies held at once, from a request's headers until its record is complete:
   * each request counts its declared `Content-Length` (up to `maxBodySize`), or `maxBodySize` when
   * its length is not declared (chunked). A request that does not fit is answered 503
   * `inspector_busy` before anything of it is forwarded. At least `maxBodySize` + 1. Default 32 MiB.
   */
  maxInFlightBytes?: number
  /** Ring bounds: default 500 records and 64 MiB. */
  maxRecords?: number
  maxBytes?: number
  /** For edit-and-resend and the presets that go through the emulator; without it, those actions answer 501. */
  deliver?: DeliverFunction
  /** Each record once it is complete, in order of completion. */
  onRecord?: (record: InspectedRecord) => void
  /** A line for the terminal, such as how many lines of the save file were skipped. Default `console.error`. */
  onWarning?: (message: string) => void
  /** The page's access token; default a random one per run. */
  accessToken?: string
}

/** {@link InspectorOptions} with every default applied and every value checked, once. */
export interface InspectorSettings {
  auth: InspectAuth
  secrets: readonly string[]
  forwardTo: URL | undefined
  port: number
  uiPort: number
  host: string
  save: string | undefined
  maxBodySize: number
  signatureHeader: string
  tokenPath: string
  forwardTimeoutMs: number
  bodyTimeoutMs: number
  maxConnections: number
  maxInFlightBytes: number
  maxRecords: number
  maxBytes: number
  deliver: DeliverFunction | undefined
  onRecord: ((record: InspectedRecord) => void) | undefined
  onWarning: (message: string) => void
  accessToken: string | undefined
}

const fail = (message: string): never => {
  throw new TypeError(`@hookguard/inspect: ${message}`)
}

function checkPort(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 0 || value > 65535) fail(`${name} must be a whole number from 0 to 65535`)
  return value
}

export function checkOptions({
  auth,
  forwardTo,
  port = DEFAULT_PORT,
  uiPort = DEFAULT_UI_PORT,
  host = DEFAULT_HOST,
  save,
  maxBodySize = DEFAULT_MAX_BODY_SIZE,
  signatureHeader = DEFAULT_SIGNATURE_HEADER,
  tokenPath = DEFAULT_TOKEN_PATH,
  forwardTimeoutMs = DEFAULT_FORWARD_TIMEOUT_MS,
  bodyTimeoutMs = DEFAULT_BODY_TIMEOUT_MS,
  maxConnections = DEFAULT_MAX_CONNECTIONS,
  maxInFlightBytes = DEFAULT_MAX_IN_FLIGHT_BYTES,
  maxRecords = DEFAULT_MAX_RECORDS,
  maxBytes = DEFAULT_MAX_BYTES,
  deliver,
  onRecord,
  onWarning = (message) => console.error(message),
  accessToken,
}: InspectorOptions): InspectorSettings {
  if (typeof auth !== 'object' || auth === null) fail('auth is required: { mode, … }')
  let secrets: readonly string[] = []
  switch (auth.mode) {
    case 'secret':
      secrets = typeof auth.secret === 'string' ? [auth.secret] : [...auth.secret]
      if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s === ''))
        fail('auth.secret must be one or more non-empty secrets')
      break
    case 'basic':
      if (!auth.username || !auth.password) fail('auth.username and auth.password are required')
      break
    case 'oauth2':
      if (!auth.appId || !auth.secret) fail('auth.appId and auth.secret are required')
      break
    case 'none':
      break
    default:
      fail('auth.mode must be one of secret, basic, oauth2, none')
  }
  let target: URL | undefined
  if (forwardTo !== undefined) {
    if (!URL.canParse(forwardTo)) fail('forwardTo must be an http:// URL')
    target = new URL(forwardTo)
    if (target.protocol !== 'http:') fail('forwardTo must be an http:// URL (the app on this machine)')
    if (target.search !== '' || target.hash !== '') fail('forwardTo takes no query or fragment: the request’s own is appended')
  }
  if (!Number.isInteger(maxBodySize) || maxBodySize < 1) fail('maxBodySize must be a positive integer')
  if (!Number.isInteger(forwardTimeoutMs) || forwardTimeoutMs < 1) fail('forwardTimeoutMs must be a positive integer')
  if (!Number.isInteger(bodyTimeoutMs) || bodyTimeoutMs < 1) fail('bodyTimeoutMs must be a positive integer')
  if (!Number.isInteger(maxConnections) || maxConnections < 1) fail('maxConnections must be a positive integer')
  if (!Number.isInteger(maxInFlightBytes) || maxInFlightBytes <= maxBodySize) {
    fail('maxInFlightBytes must be an integer over maxBodySize: a body of the size limit must fit')
  }
  if (!tokenPath.startsWith('/')) fail('tokenPath must start with /')
  if (accessToken !== undefined && !/^[A-Za-z0-9_-]{16,}$/.test(accessToken)) fail('accessToken must be 16 or more URL-safe characters')
  return {
    auth,
    secrets,
    forwardTo: target,
    port: checkPort(port, 'port'),
    uiPort: checkPort(uiPort, 'uiPort'),
    host,
    save,
    maxBodySize,
    signatureHeader,
    tokenPath,
    forwardTimeoutMs,
    bodyTimeoutMs,
    maxConnections,
    maxInFlightBytes,
    maxRecords,
    maxBytes,
    deliver,
    onRecord,
    onWarning,
    accessToken,
  }
}
