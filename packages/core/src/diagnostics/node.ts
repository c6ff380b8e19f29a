import { channel } from 'node:diagnostics_channel'
import type { DiagnosticsChannel } from './web.ts'

/** Node's diagnostics channel of that name, which APM and OpenTelemetry subscribers find by name. */
export const channelFor = (name: string): DiagnosticsChannel => channel(name)
