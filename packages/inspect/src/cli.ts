// @hookguard/inspect/cli: the command-line options of the commands that receive deliveries
// (`hookguard listen` and `hookguard inspect`), declared once, with their reader and their help.
// Apart from the package's main entry, so that the `hookguard` command reads them without loading
// the inspector's servers and page.

export type {
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
