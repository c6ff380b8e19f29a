// @hookguard/inspect: the local inspector behind `hookguard inspect`. Records each delivery's exact
// bytes, says why a signature failed, replays, re-signs and exports; a page on loopback shows it.

export type { InspectCommandDeps, InspectIo } from './command.ts'
export { inspectCommand } from './command.ts'
export {
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_FORWARD_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_IN_FLIGHT_BYTES,
  DEFAULT_PORT,
  DEFAULT_TOKEN_PATH,
  DEFAULT_UI_PORT,
} from './defaults.ts'
export type { CoveredSegment, DiagnoseInput, Diagnosis, TriedVariant, VariantMatch, VariantName } from './diagnose.ts'
export { coveredSegments, diagnose, MAX_DIAGNOSED_BODY, secretLabel } from './diagnose.ts'
export type { DiffSegment, RecordDiff } from './diff.ts'
export { diffBytes, diffRecords } from './diff.ts'
export type { ExportFormat } from './export.ts'
export { exportAs, printfBytes, shellQuote, toCurl, toHar, toSendCommand } from './export.ts'
export type { ExportContext } from './export-context.ts'
export type { Fixture } from './fixture.ts'
export { toFixture } from './fixture.ts'
export type { Inspector } from './inspector.ts'
export { startInspector } from './inspector.ts'
export type { DeliverFunction, InspectAuth, InspectorOptions } from './options.ts'
export type { AppAnswer, InspectedRecord, RecordSource } from './record.ts'
export type { RingOptions } from './ring.ts'
export { COMPACT_FACTOR, DEFAULT_MAX_BYTES, DEFAULT_MAX_RECORDS, fromLine, Ring, toLine } from './ring.ts'
export type { RecordDetail, RecordSummary } from './view.ts'
