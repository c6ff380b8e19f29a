// @hookguard/fastify: the webhook and token plugins, and the logging pieces that keep credentials
// in a URL out of Fastify's own log lines and answers.

export type { WebhookAuth, WebhookDelivery, WebhookErrorCode, WebhookEvent, WebhookOptions, WebhookRequest } from '@hookguard/core'
export { WebhookError } from '@hookguard/core'
export type { LoggedRequest } from './log-safety.ts'
export { frameworkErrors, logSerializers, notFoundHandler } from './log-safety.ts'
export type { FastifyWebhookDelivery, FastifyWebhookOptions, WebhookVariables } from './plugin.ts'
export { requireWebhook, tokenEndpoint, webhook } from './plugin.ts'
