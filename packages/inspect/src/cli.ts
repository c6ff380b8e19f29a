// @hookguard/inspect/cli: what the commands that receive deliveries (`hookguard listen` and
// `hookguard inspect`) share: their command-line options, declared once, with their reader and
// their help; the bound on what their receiving server takes in at once; their terminal text.
// Apart from the package's main entry, so that the `hookguard` command reads them without loading
// the inspector's servers and page.

export type { Admission, AdmissionLimits, BusyAnswer } from './admission.ts'
export { createAdmission } from './admission.ts'
export type {
  AdmissionSettings,
  CredentialOption,
  HelpText,
  Mode,
  OptionSpec,
  OptionTable,
  OptionValues,
  ReceiverAuth,
  ReceiverSettings,
} from './cli-options.ts'
export {
  ADMISSION_OPTIONS,
  admissionSettings,
  credential,
  helpText,
  MODES,
  parseCommandLine,
  RECEIVER_OPTIONS,
  readOptions,
  receiverSettings,
  signingSecret,
  withDefaults,
} from './cli-options.ts'
export type { InspectSettings } from './command-options.ts'
export { INSPECT_HELP, INSPECT_OPTIONS, inspectSettings } from './command-options.ts'
export { terminalBlock, terminalLine } from './terminal-text.ts'
