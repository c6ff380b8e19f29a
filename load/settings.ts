import type { WebhookOptions } from '@hookguard/core'

/** What the load server and the load generator agree on; nothing here is a real credential. */
export const SECRET = 'whsec-load-5b1f7e'
export const BASIC = { username: 'load-user', password: 'load-password-4c1d' } as const

/**
 * Small, so that an oversize request costs the loopback 64 KiB rather than the default 1 MiB:
 * the point is the refusal path under load, not the bandwidth.
 */
export const MAX_BODY_SIZE = 64 * 1024

/**
 * Each request names its case here, and a valid one the delivery it carries; the server echoes
 * both, tying every answer to the request it answered. The load client's own pairing of answers
 * with requests cannot be relied on once a server closes connections: after a refusal answered
 * with `Connection: close` (an oversize body), autocannon reconnects and attributes the answers
 * that follow to the request after the one they answer.
 */
export const CASE_HEADER = 'x-load-case'
export const DELIVERY_HEADER = 'x-load-delivery'

export const PATHS = { secret: '/secret', basic: '/basic' } as const

export const SECRET_OPTIONS: WebhookOptions = { auth: { mode: 'secret', secret: SECRET }, maxBodySize: MAX_BODY_SIZE }
export const BASIC_OPTIONS: WebhookOptions = { auth: { mode: 'basic', ...BASIC }, maxBodySize: MAX_BODY_SIZE }

export const FRAMEWORKS = ['express5', 'koa3', 'hono', 'express4', 'koa2'] as const
export type Framework = (typeof FRAMEWORKS)[number]

export const FRAMEWORK_NAMES: Record<Framework, string> = {
  express5: 'Express 5',
  express4: 'Express 4',
  koa3: 'Koa 3',
  koa2: 'Koa 2',
  hono: 'Hono (@hono/node-server)',
}

/**
 * Parent → server over IPC. `gc` runs a full collection first, so that the start and end samples
 * do not differ by garbage that merely has not been collected yet.
 */
export type ServerRequest = { type: 'memory'; gc: boolean }
/** Server → parent over IPC, in bytes. */
export type ServerReply = { type: 'memory'; rss: number; heapUsed: number; external: number; arrayBuffers: number }
