import { decodeUtf8 } from './bytes.ts'
import { WebhookError } from './errors.ts'
import type { WebhookRequest } from './request.ts'

/** Whether the request says its body is a form (the token address, a token sent as a form field). */
export function isFormUrlEncoded(request: WebhookRequest): boolean {
  const type = request.header('content-type')
  return type !== null && /^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)
}

/** The fields of a form-urlencoded body; `invalid_body` when it is not UTF-8. */
export function parseForm(body: Uint8Array): URLSearchParams {
  try {
    return new URLSearchParams(decodeUtf8(body))
  } catch {
    // Stryker disable next-line StringLiteral: message text only — the error code and status are pinned
    throw new WebhookError('invalid_body', 'The form body is not valid UTF-8.')
  }
}

/**
 * A form's fields as an object; a repeated field becomes an array. Each field is defined as an own
 * property, as `JSON.parse` does, so a field named `__proto__` is data, not the object's prototype
 * (an assignment would hand the handler an object whose `hasOwnProperty` is an array's).
 */
export function formPayload(form: URLSearchParams): Record<string, string | string[]> {
  const payload: Record<string, string | string[]> = {}
  for (const key of new Set(form.keys())) {
    const values = form.getAll(key)
    Object.defineProperty(payload, key, {
      value: values.length === 1 ? (values[0] as string) : values,
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return payload
}
