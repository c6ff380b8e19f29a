import type { WebhookError } from './errors.ts'

/** An answer for an adapter to write in its framework's own way. */
export interface WebhookResponse {
  status: number
  headers: Record<string, string>
  /** JSON text. */
  body: string
}

const JSON_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  // Answers carry verdicts about credentials and, on the token address, the token itself.
  'cache-control': 'no-store',
} as const

export function jsonResponse(status: number, value: unknown, headers: Record<string, string> = {}): WebhookResponse {
  return { status, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(value) }
}

export function errorResponse(error: WebhookError): WebhookResponse {
  const body =
    error.paths === undefined
      ? { error: error.code, message: error.message }
      : { error: error.code, message: error.message, paths: error.paths }
  return jsonResponse(error.status, body, error.headers)
}
