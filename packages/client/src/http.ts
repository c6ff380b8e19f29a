import { ApiError, answerError, answerTooLarge, networkError, type RequestContext } from './errors.ts'

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

/**
 * The most of an answer's body the client reads: the service's answers are small (a token, a page
 * of customers), and a server that sends without end must not fill the process's memory.
 */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024

/** The body as text, read no further than `limit` bytes. */
async function readText(res: Response, limit: number, context: RequestContext): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? '')
  const reader = res.body?.getReader()
  const decoder = new TextDecoder()
  let text = ''
  let size = 0
  try {
    if (declared > limit) throw answerTooLarge(res.status, limit, context)
    for (let read = await reader?.read(); read !== undefined && !read.done; read = await reader?.read()) {
      size += read.value.byteLength
      if (size > limit) throw answerTooLarge(res.status, limit, context)
      text += decoder.decode(read.value, { stream: true })
    }
  } catch (error) {
    await reader?.cancel().catch(() => {})
    throw error instanceof ApiError ? error : networkError(error, context)
  }
  return text + decoder.decode()
}

/** The body parsed when it says it is JSON (and is), else its text; `undefined` when empty. */
export async function readBody(res: Response, context: RequestContext, limit = MAX_ANSWER_BYTES): Promise<unknown> {
  const text = await readText(res, limit, context)
  if (text === '') return undefined
  if (!JSON_TYPE.test(res.headers.get('content-type') ?? '')) return text
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** The body of a 2xx answer, or the `ApiError` for any other. */
export async function readAnswer(res: Response, context: RequestContext, limit = MAX_ANSWER_BYTES): Promise<unknown> {
  const body = await readBody(res, context, limit)
  if (!res.ok) throw answerError(res.status, body, context)
  return body
}
