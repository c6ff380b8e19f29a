/**
 * What a README server must answer, and how the emulator delivers to it: shared by
 * `scripts/snippet-test.ts` (Node servers, from the installed tarballs) and the runtime matrix's
 * workerd job (`runtimes/readme-workers.ts`, Workers, from the workspace builds).
 *
 * Plain TypeScript (types erasable by Node's type stripping): the workerd driver imports it.
 */
import type { Delivery, Snippet } from './snippets.ts'

/** The variables every snippet runs with: what the READMEs tell the user to set. */
export const ENV = {
  WEBHOOK_SECRET: 'whsec-snippets-5d1c',
  HOOK_PASSWORD: 'correct horse battery staple',
  APP_ID: 'snippet-app',
  APP_SECRET: 'snippet-app-secret-0123456789abcdef',
}

/** The Basic username the READMEs' snippets write literally. */
export const BASIC_USERNAME = 'hook-user'

/** What of `@hookguard/emulator` the checks use: the installed tarball's, or the workspace's build. */
export interface Emulator {
  deliver(options: Record<string, unknown>): Promise<{ status: number; headers: Record<string, string>; body: string }>
  sampleEvent(name?: string): unknown
  mockService(options: { appId: string; appSecret: string }): Promise<{ url: string; close(): Promise<void> }>
  EmulatorError: new (...args: never[]) => Error & { code: string; status?: number; reason?: string }
}

export interface Attempt {
  name: string
  status: number
  error?: string
  send(): Promise<{ status: number; error?: string | undefined }>
}

/**
 * The genuine delivery, which must get the status the README says, and the refusals each mode
 * must give: a body changed after signing, a wrong password, a forged token, a body that is not JSON.
 */
export function attempts(delivery: Delivery, base: string, snippet: Snippet, emulator: Emulator, signal: AbortSignal): Attempt[] {
  const url = `${base}${delivery.path}`
  const payload = emulator.sampleEvent('customer.created')
  const timeout = () => AbortSignal.any([signal, AbortSignal.timeout(15_000)])
  const answer = async (options: Record<string, unknown>) => {
    try {
      const { status, body } = await emulator.deliver({ url, payload, signal: timeout(), ...options })
      return { status, error: status >= 300 ? errorCode(body) : undefined }
    } catch (error) {
      // The service stops at the token address when it refuses the app's credentials.
      if (error instanceof emulator.EmulatorError && error.status !== undefined) return { status: error.status, error: error.reason }
      throw error
    }
  }
  const genuine = (options: Record<string, unknown>): Attempt => ({ name: 'genuine', status: snippet.expect, send: () => answer(options) })
  switch (delivery.mode) {
    case 'secret': {
      const options = { mode: 'secret', secret: ENV.WEBHOOK_SECRET }
      /** Changes the body after it was signed, as a forger would. */
      const tamper: typeof fetch = (input, init) =>
        fetch(input, { ...init, body: new TextDecoder().decode(init?.body as Uint8Array).replace('customer', 'kustomer') })
      return [
        genuine(options),
        { name: 'body changed in transit', status: 401, error: 'invalid_signature', send: () => answer({ ...options, fetch: tamper }) },
        { name: 'another secret', status: 401, error: 'invalid_signature', send: () => answer({ mode: 'secret', secret: 'whsec-other' }) },
      ]
    }
    case 'basic': {
      const options = { mode: 'basic', username: BASIC_USERNAME, password: ENV.HOOK_PASSWORD }
      return [
        genuine(options),
        { name: 'wrong password', status: 401, error: 'invalid_credentials', send: () => answer({ ...options, password: 'guess' }) },
      ]
    }
    case 'oauth2': {
      const options = { mode: 'oauth2', tokenUrl: `${base}${snippet.tokenPath}`, appId: ENV.APP_ID, appSecret: ENV.APP_SECRET }
      return [
        genuine(options),
        {
          name: 'forged token',
          status: 401,
          error: 'invalid_token',
          async send() {
            const res = await fetch(`${url}?access_token=forged`, { method: 'POST', body: '{"event":"forged"}', signal: timeout() })
            return { status: res.status, error: errorCode(await res.text()) }
          },
        },
        // The token address refuses the wrong secret, and the service never delivers.
        { name: 'wrong app secret', status: 401, error: 'invalid_client', send: () => answer({ ...options, appSecret: 'guess' }) },
      ]
    }
    case 'none':
      return [
        genuine({ mode: 'none' }),
        { name: 'not JSON', status: 400, error: 'invalid_json', send: () => answer({ mode: 'none', payload: 'event=customer.created' }) },
      ]
  }
}

/**
 * Delivers every attempt of every mode the snippet shows to `base`; resolves the statuses seen,
 * throws at the first answer that is not the README's.
 */
export async function deliverAll(snippet: Snippet, base: string, emulator: Emulator, signal: AbortSignal): Promise<string[]> {
  const seen: string[] = []
  for (const delivery of snippet.deliveries) {
    for (const attempt of attempts(delivery, base, snippet, emulator, signal)) {
      const got = await attempt.send()
      if (got.status !== attempt.status || got.error !== attempt.error) {
        const said = `${attempt.status}${attempt.error ? ` ${attempt.error}` : ''}`
        throw new Error(
          `${delivery.mode} (${attempt.name}): answered ${got.status}${got.error ? ` ${got.error}` : ''}, the README says ${said}`,
        )
      }
      seen.push(String(got.status))
    }
  }
  return seen
}

function errorCode(body: string): string | undefined {
  try {
    const { error } = JSON.parse(body) as { error?: unknown }
    return typeof error === 'string' ? error : undefined
  } catch {
    return undefined
  }
}
