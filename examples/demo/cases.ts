import { deliver, EmulatorError, sampleEvent } from '@hookguard/emulator'
import { CREDENTIALS } from './receivers.ts'

export interface Case {
  mode: string
  name: string
  expect: { status: number; error?: string }
  /** Delivers to the receiver at `base`; resolves its status and `error` code. */
  run(base: string): Promise<{ status: number; error?: string | undefined }>
}

/** Changes the body on its way to the receiver, after it was signed: what a forger would do. */
const tamperInTransit: typeof fetch = (input, init) =>
  fetch(input, { ...init, body: new TextDecoder().decode(init?.body as Uint8Array).replace('王 小明', '王 大明') })

const payload = sampleEvent('customer.created')

/** The receiver's status and `error` code; an accepted delivery must have reached the handler intact. */
async function outcome(send: () => ReturnType<typeof deliver>): Promise<{ status: number; error?: string | undefined }> {
  try {
    const { status, body } = await send()
    const answer = JSON.parse(body) as { error?: string; received?: unknown }
    if (status >= 300) return { status, error: answer.error }
    return { status, error: answer.received === payload.event ? undefined : 'payload_not_handed_on' }
  } catch (error) {
    // The service stops at the token address when it refuses the app's credentials.
    if (error instanceof EmulatorError && error.status !== undefined) return { status: error.status, error: error.reason }
    throw error
  }
}

const oauth = (base: string, token = 'token') => ({
  url: `${base}/oauth2`,
  mode: 'oauth2' as const,
  tokenUrl: `${base}/oauth2/${token}`,
  appId: CREDENTIALS.appId,
  payload,
})

export const CASES: Case[] = [
  {
    mode: 'secret',
    name: 'signed by the service',
    expect: { status: 200 },
    run: (base) => outcome(() => deliver({ url: `${base}/secret`, mode: 'secret', secret: CREDENTIALS.secret, payload })),
  },
  {
    mode: 'secret',
    name: 'body changed in transit',
    expect: { status: 401, error: 'invalid_signature' },
    run: (base) =>
      outcome(() => deliver({ url: `${base}/secret`, mode: 'secret', secret: CREDENTIALS.secret, payload, fetch: tamperInTransit })),
  },
  {
    mode: 'secret',
    name: 'signed with another secret',
    expect: { status: 401, error: 'invalid_signature' },
    run: (base) => outcome(() => deliver({ url: `${base}/secret`, mode: 'secret', secret: 'whsec-someone-else', payload })),
  },
  {
    mode: 'basic',
    name: 'right credentials',
    expect: { status: 200 },
    run: (base) =>
      outcome(() =>
        deliver({ url: `${base}/basic`, mode: 'basic', username: CREDENTIALS.username, password: CREDENTIALS.password, payload }),
      ),
  },
  {
    mode: 'basic',
    name: 'wrong password',
    expect: { status: 401, error: 'invalid_credentials' },
    run: (base) =>
      outcome(() => deliver({ url: `${base}/basic`, mode: 'basic', username: CREDENTIALS.username, password: 'guess', payload })),
  },
  {
    mode: 'oauth2',
    name: 'fresh token',
    expect: { status: 200 },
    run: (base) => outcome(() => deliver({ ...oauth(base), appSecret: CREDENTIALS.appSecret })),
  },
  {
    mode: 'oauth2',
    name: 'expired token',
    expect: { status: 401, error: 'invalid_token' },
    run: (base) => outcome(() => deliver({ ...oauth(base, 'stale-token'), appSecret: CREDENTIALS.appSecret })),
  },
  {
    mode: 'oauth2',
    name: 'wrong app secret',
    expect: { status: 401, error: 'invalid_client' },
    run: (base) => outcome(() => deliver({ ...oauth(base), appSecret: 'not-the-secret' })),
  },
  {
    mode: 'none',
    name: 'plain JSON',
    expect: { status: 200 },
    run: (base) => outcome(() => deliver({ url: `${base}/none`, mode: 'none', payload })),
  },
  {
    mode: 'none',
    name: 'not JSON',
    expect: { status: 400, error: 'invalid_json' },
    run: (base) => outcome(() => deliver({ url: `${base}/none`, mode: 'none', payload: 'event=customer.created' })),
  },
  {
    mode: 'none',
    name: 'over the 1 MiB limit',
    expect: { status: 413, error: 'payload_too_large' },
    run: (base) => outcome(() => deliver({ url: `${base}/none`, mode: 'none', payload: { padding: 'x'.repeat(1_100_000) } })),
  },
]
