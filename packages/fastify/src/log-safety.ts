import { STATUS_CODES } from 'node:http'
import { urlForLog } from '@hookguard/core/adapter'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'

// Fastify writes a request's URL as received into places a plugin's hooks cannot reach: its 404
// line and answer, its router's refusals, its request log. A webhook URL can carry the access
// token and a token URL the app secret, so each of those surfaces gets a version without them.

/**
 * A not-found handler for `app.setNotFoundHandler`: Fastify's own answer and log line
 * (`Route GET:/path not found`), with the URL fit for a log (`urlForLog`: no query field whose
 * name, in any case and decoded, contains `access_token` or `secret`, and the path cut at a `;`,
 * an escaped `?`, `;` or `%`, or a segment naming a credential). Fastify's default writes the URL
 * as received into both, so a
 * mistyped webhook address logs and echoes the access token, and a mistyped token address the
 * app secret; `logSerializers` cannot reach that line, which is a message, not a field. The line
 * is written at `info`, whatever `disableRequestLogging` or `logController` say.
 *
 * @example
 * const quiet = Fastify({ frameworkErrors, logger: { serializers: logSerializers } })
 * quiet.setNotFoundHandler(notFoundHandler)
 */
export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const message = `Route ${request.method}:${urlForLog(request.raw.url ?? request.url)} not found`
  request.log.info(message)
  return reply.code(404).send({ message, error: 'Not Found', statusCode: 404 })
}

/**
 * Fastify's own answers to the errors of `frameworkErrors`, with the message it gives them less
 * the URL it quotes. Unlisted codes get their HTTP status's text.
 */
const FRAMEWORK_ERRORS: Record<string, { statusCode: number; error: string; message: string }> = {
  FST_ERR_BAD_URL: { statusCode: 400, error: 'Bad Request', message: 'The URL is not a valid url component' },
  FST_ERR_MAX_PARAM_LENGTH: { statusCode: 414, error: 'Bad Request', message: 'The URL is exceeding the max param length' },
  FST_ERR_ASYNC_CONSTRAINT: { statusCode: 500, error: 'Internal Server Error', message: 'Unexpected error from async constraint' },
}

/**
 * A handler for Fastify's `frameworkErrors` server option, for the requests its router refuses
 * before any route or hook: a path that is no valid percent-encoding (`FST_ERR_BAD_URL`, 400),
 * a parameter over `maxParamLength` (`FST_ERR_MAX_PARAM_LENGTH`, 414), a failed async
 * constraint. Fastify's default answers them with the URL as received in the message
 * (`'/webhooks%zz?access_token=…' is not a valid url component`), token or app secret included;
 * this one answers the same shape (`{ error, code, message, statusCode }`) and logs a line at
 * `info`, with no URL in either. The request's own log lines go through `logSerializers`. It is a
 * server option: neither plugin can set it.
 *
 * @example
 * const safe = Fastify({ frameworkErrors, logger: { serializers: logSerializers } })
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const known = FRAMEWORK_ERRORS[error.code]
  const statusCode =
    known?.statusCode ?? (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500)
  const answer = known ?? { error: STATUS_CODES[statusCode] ?? 'Error', message: STATUS_CODES[statusCode] ?? 'Error' }
  // error.message quotes the URL: neither the line nor the answer takes it.
  request.log.info({ code: error.code, statusCode }, answer.message)
  const body =
    error.code === 'FST_ERR_ASYNC_CONSTRAINT'
      ? { error: answer.error, message: answer.message, statusCode }
      : { error: answer.error, code: error.code, message: answer.message, statusCode }
  return reply.code(statusCode).send(body)
}

/**
 * A request as `logSerializers.req` writes it: Fastify's own fields, the URL without credentials.
 * A type alias, not an interface, so that it fits Fastify's serializer type with its index signature.
 */
export type LoggedRequest = {
  method: string
  url: string
  version?: string
  host: string
  remoteAddress: string
  remotePort?: number
}

/**
 * Serializers for Fastify's logger that write a request's URL without the credentials it can
 * carry (`access_token`, `secret`, `client_secret`, by `urlForLog`'s rule), as `notFoundHandler` does; otherwise the same fields as Fastify's
 * own. hookguard's routes use them already; give them to `Fastify({ logger: { serializers } })`
 * for every other route too (a mistyped webhook address still carries the token), with
 * `notFoundHandler` for the 404's own line and `frameworkErrors` for the router's 400.
 */
export const logSerializers = {
  req(request: FastifyRequest): LoggedRequest {
    // Node joins a repeated header it does not know into one string.
    const version = request.headers['accept-version']
    const remotePort = request.socket?.remotePort
    // An absent field rather than an undefined one: Fastify declares both optional, and under
    // `exactOptionalPropertyTypes` (on in the tsconfig.json of `tsc --init`) optional excludes undefined.
    return {
      method: request.method,
      url: urlForLog(request.url),
      ...(typeof version === 'string' ? { version } : {}),
      host: request.host,
      remoteAddress: request.ip,
      ...(remotePort !== undefined ? { remotePort } : {}),
    }
  },
}
