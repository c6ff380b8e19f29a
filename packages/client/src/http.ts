import { answerError, networkError, type RequestContext } from './errors.ts'

export type Fetch = (input: string, init?: RequestInit) => Promise<Response>

/** Calls fetch, turning a failure to get any answer into an `ApiError` with code `network_error`. */
export async function send(fetch: Fetch, url: string, init: RequestInit, context: RequestContext): Promise<Response> {
  try {
    return await fetch(url, init)
  } catch (error) {
    // The caller's own abort is not the service's fault: it keeps its AbortError, as fetch does.
    if (init.signal?.aborted) throw error
    throw networkError(error, context)
  }
}

const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i

/** The body parsed when it says it is JSON (and is), else its text; `undefined` when empty. */
export async function readBody(res: Response, context: RequestContext): Promise<unknown> {
  let text: string
  try {
    text = await res.text()
  } catch (error) {
    throw networkError(error, context)
  }
  if (text === '') return undefined
  if (!JSON_TYPE.test(res.headers.get('content-type') ?? '')) return text
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** The body of a 2xx answer, or the `ApiError` for any other. */
export async function readAnswer(res: Response, context: RequestContext): Promise<unknown> {
  const body = await readBody(res, context)
  if (!res.ok) throw answerError(res.status, body, context)
  return body
}
