import { createReceiver, type Receiver, type WebhookEvent, type WebhookOptions, type WebhookResponse } from '@hookguard/core'
import { payloadTooLarge } from '@hookguard/core/adapter'
import { type Diagnosis, diagnose, failedDiagnosis, identifySecret, skippedDiagnosis } from './diagnose.ts'
import { createDiagnosisBudget, type DiagnosisBudget } from './diagnosis-budget.ts'
import type { InspectorSettings } from './options.ts'

/** hookguard's verdict on one request, with what its events said about it. */
export interface Judgement {
  verdict: 'verified' | 'refused'
  /** The answer hookguard gives (the inspector's own, without `--forward-to`). */
  response: WebhookResponse
  code?: string
  hint?: string
  form?: string
  fingerprint?: string
  duplicate?: 'processing' | 'done'
  diagnosis?: Diagnosis
}

export interface CapturedRequest {
  method: string
  url: string
  /** Node's raw header lines: names and values alternating. */
  rawHeaders: readonly string[]
  body: Uint8Array
  /** The body went over the size limit; `body` holds its first part. */
  truncated: boolean
}

const VERIFIED_ANSWER: WebhookResponse = {
  status: 200,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: '{"received":true}',
}

/**
 * Verifies requests with the app's settings, through the same `createReceiver` every adapter is
 * built on. `answering`: the inspector is the receiver, so deliveries are deduplicated as an app
 * with `dedupe` would (in memory); in front of an app, the app does that and this only judges.
 * The diagnoses of refused deliveries share `budget` (see diagnosis-budget.ts).
 */
export function createJudge(settings: InspectorSettings, answering: boolean, budget: DiagnosisBudget = createDiagnosisBudget()) {
  // Events tell what a result does not (the hint, the form, the fingerprint). Verifications run
  // one at a time, so each event belongs to the one running: AsyncLocalStorage would tie them as
  // well, but its promise hooks cost every request of the process (bench/inspect.ts).
  let current: WebhookEvent[] | undefined
  let queue: Promise<unknown> = Promise.resolve()
  const oneAtATime = <T>(events: WebhookEvent[], run: () => Promise<T>): Promise<T> => {
    const next = queue.then(async () => {
      current = events
      try {
        return await run()
      } finally {
        current = undefined
      }
    })
    queue = next.catch(() => {})
    return next
  }
  const auth = toWebhookAuth(settings)
  const options: WebhookOptions = {
    auth,
    maxBodySize: settings.maxBodySize,
    signatureHeader: settings.signatureHeader,
    onEvent: (event) => current?.push(event),
    ...(answering && { dedupe: {} }),
  }
  const receiver: Receiver = createReceiver(options, { packageName: '@hookguard/inspect' })

  const incoming = ({ method, url, rawHeaders, body, truncated }: CapturedRequest) => ({
    method,
    url,
    headers: rawHeaders,
    // Over the limit, the core refuses as it does for a streamed body that grows past it.
    body: truncated ? async (limit: number) => Promise.reject(payloadTooLarge(limit)) : body,
  })

  return {
    receiver,

    async delivery(request: CapturedRequest): Promise<Judgement> {
      const events: WebhookEvent[] = []
      const result = await oneAtATime(events, () => receiver.verify(incoming(request)))
      let judgement: Judgement
      if (result.ok) {
        // The inspector's own handler succeeds at once: the delivery is remembered.
        await result.settle?.(true)
        judgement = { verdict: 'verified', response: VERIFIED_ANSWER }
      } else if (result.error === undefined) {
        judgement = { verdict: 'verified', response: result.response, duplicate: 'done' }
      } else {
        const { code } = result.error
        judgement =
          code === 'duplicate_in_progress'
            ? { verdict: 'verified', response: result.response, code, duplicate: 'processing' }
            : { verdict: 'refused', response: result.response, code }
      }
      for (const event of events) {
        if (event.type === 'verified') {
          judgement.fingerprint = event.fingerprint
          if (event.form !== undefined) judgement.form = event.form
        } else if (event.type === 'rejected' && event.hint !== undefined) judgement.hint = event.hint
        else if (event.type === 'duplicate') judgement.fingerprint = event.fingerprint
      }
      if (auth.mode === 'secret' && !request.truncated) {
        // A verified delivery needs no diagnosis, only which secret signed it. The verdict is
        // made: a diagnosis that fails on a hostile body must not take the record with it.
        // A refused one's diagnosis is the sender's choice of work: it takes its turn in the budget.
        const input = {
          body: request.body,
          header: headerOf(request.rawHeaders, settings.signatureHeader),
          secrets: settings.secrets,
          unicodeWhitespace: auth.unicodeWhitespace === true,
        }
        try {
          judgement.diagnosis =
            judgement.verdict === 'verified'
              ? await identifySecret(input)
              : ((await budget.run((spent) => diagnose(input, spent))) ?? skippedDiagnosis())
        } catch {
          judgement.diagnosis = failedDiagnosis()
        }
      }
      return judgement
    },

    async token(request: CapturedRequest): Promise<Judgement> {
      const response = await receiver.token(incoming(request))
      if (response.status === 200) return { verdict: 'verified', response }
      let code: string | undefined
      try {
        const parsed = JSON.parse(response.body) as { error?: unknown }
        if (typeof parsed.error === 'string') code = parsed.error
      } catch {
        // No code to show.
      }
      return { verdict: 'refused', response, ...(code !== undefined && { code }) }
    },
  }
}

export type Judge = ReturnType<typeof createJudge>

function toWebhookAuth(settings: InspectorSettings): WebhookOptions['auth'] {
  const { auth } = settings
  switch (auth.mode) {
    case 'secret':
      return { mode: 'secret', secret: settings.secrets, unicodeWhitespace: auth.unicodeWhitespace === true }
    case 'basic':
      return { mode: 'basic', username: auth.username, password: auth.password }
    case 'oauth2':
      return { mode: 'oauth2', appId: auth.appId, secret: auth.secret }
    case 'none':
      return { mode: 'none' }
  }
}

/** One header from raw header lines, repeated lines joined with `, ` as the receiver reads them. */
export function headerOf(rawHeaders: readonly string[], name: string): string | null {
  let value: string | null = null
  const lower = name.toLowerCase()
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if ((rawHeaders[i] as string).toLowerCase() !== lower) continue
    value = value === null ? (rawHeaders[i + 1] as string) : `${value}, ${rawHeaders[i + 1]}`
  }
  return value
}
