import { DEFAULT_MAX_BODY_SIZE } from '@hookguard/core'
import {
  ADMISSION_OPTIONS,
  type AdmissionSettings,
  admissionSettings,
  checkPort,
  helpText,
  type OptionTable,
  RECEIVER_OPTIONS,
  type ReceiverSettings,
  readOptions,
  receiverSettings,
  usage,
  withDefaults,
} from './cli-options.ts'
import { DEFAULT_HOST, DEFAULT_PORT, DEFAULT_UI_PORT } from './defaults.ts'

/** `hookguard inspect`'s options: the receiver's, with the inspector's own after them. */
export const INSPECT_OPTIONS = {
  ...withDefaults(RECEIVER_OPTIONS, { mode: 'secret', port: String(DEFAULT_PORT) }),
  'forward-to': {
    type: 'string',
    value: '<url>',
    help: "Your app (http://localhost:3000); the request's path and query are appended",
    check: (value) => (URL.canParse(value) && new URL(value).protocol === 'http:' ? undefined : 'must be an http:// URL'),
  },
  'ui-port': {
    type: 'string',
    value: '<n>',
    help: "The page's port; 0 picks a free port",
    default: String(DEFAULT_UI_PORT),
    check: checkPort,
  },
  save: { type: 'string', value: '<file>', help: 'Keep records in an NDJSON file, reloaded on the next start' },
  json: { type: 'boolean', help: 'One JSON object a line on stdout: ready, then each delivery and token request' },
  host: {
    type: 'string',
    value: '<host>',
    help: 'Where both servers listen; any other than loopback is warned about: it exposes what is recorded',
    default: DEFAULT_HOST,
  },
  ...ADMISSION_OPTIONS,
} as const satisfies OptionTable

export const INSPECT_HELP = helpText({
  usage: 'hookguard inspect [--mode <mode>] [--forward-to <url>] [--port <n>] [--ui-port <n>] [options]',
  about: `Receives deliveries on http://127.0.0.1:<port>/ and records each one's exact bytes. With
--forward-to it stands in front of your app: each request goes on unchanged, the app's answer
comes back, and hookguard's own verdict (with the same settings) is recorded beside it, flagged
when the two disagree. Without it, it answers as hookguard would. A page on
http://127.0.0.1:<ui-port>/ shows every delivery live: headers, bytes, the text the signature
covers, why a signature failed, replay, edit and resend, forged presets, exports, diff.`,
  options: INSPECT_OPTIONS,
  footer: `Credentials are best given in the environment, where they stay out of shell history and the
process list. The page needs the access token printed with its address (one per run). Runs until
Ctrl-C.

Example:
  HOOKGUARD_SECRET=whsec-… hookguard inspect --mode secret --forward-to http://localhost:3000
`,
})

/** What `hookguard inspect` runs with: the receiver's settings and the inspector's own. */
export interface InspectSettings extends ReceiverSettings, AdmissionSettings {
  forwardTo: string | undefined
  uiPort: number
  save: string | undefined
  json: boolean
  host: string
}

/** `hookguard inspect`'s command line and environment, read and checked; a mistake throws a `TypeError` starting `@hookguard/inspect: `. */
export function inspectSettings(args: readonly string[], env: Readonly<Record<string, string | undefined>>): InspectSettings {
  const values = readOptions(args, INSPECT_OPTIONS, env)
  // One port cannot serve both: the second would fail with a message that names the wrong flag.
  if (Number(values.port) === Number(values['ui-port']) && Number(values.port) !== 0) usage('--port and --ui-port must differ (or be 0)')
  return {
    ...receiverSettings(values),
    forwardTo: values['forward-to'] as string | undefined,
    uiPort: Number(values['ui-port']),
    save: values.save as string | undefined,
    json: values.json === true,
    host: values.host as string,
    ...admissionSettings(values, DEFAULT_MAX_BODY_SIZE),
  }
}
