// The inspector's defaults, apart from what sets them: the library's options and the command
// line's help both read them, and the command line loads nothing else of the inspector for them.

/**
 * The receiving port: one no common development tool takes by default, so that the inspector runs
 * beside the app it fronts (3000, 4000, 5000, 5173, 8000, 8080…), `wrangler dev` (8787) and an
 * OpenTelemetry collector (4317, 4318), and out of the ephemeral range, where a port is lent to
 * outgoing connections.
 */
export const DEFAULT_PORT = 4319
export const DEFAULT_UI_PORT = 4320
export const DEFAULT_HOST = '127.0.0.1'
export const DEFAULT_TOKEN_PATH = '/token'
export const DEFAULT_FORWARD_TIMEOUT_MS = 30_000
export const DEFAULT_BODY_TIMEOUT_MS = 30_000
/** Connections the receiving address serves at once; past it, 503 `inspector_busy`. */
export const DEFAULT_MAX_CONNECTIONS = 128
/** Bytes of bodies still arriving (or waiting for their record) held at once: 32 bodies at the default size limit. */
export const DEFAULT_MAX_IN_FLIGHT_BYTES = 32 * 1024 * 1024
