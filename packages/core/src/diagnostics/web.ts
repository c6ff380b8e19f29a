/** The part of a diagnostics channel the receiver uses. */
export interface DiagnosticsChannel {
  readonly hasSubscribers: boolean
  publish(message: unknown): void
}

/** No diagnostics channels outside Node: events reach the `onEvent` listener only. */
export const channelFor = (_name: string): DiagnosticsChannel | undefined => undefined
