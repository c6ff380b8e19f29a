import {
  createReceiver,
  DEFAULT_MAX_DEPTH,
  type IncomingRequest,
  type Receiver,
  TOKEN_MAX_BODY_SIZE,
  type WebhookOptions,
} from '@hookguard/core'
import { formatBasicAuthorization, nestsDeeperThan } from '@hookguard/core/adapter'
import { settledRatio } from '@hookguard/testkit/growth'
import { HOSTILE_SHAPES, type HostileShape } from '@hookguard/testkit/hostile'
import { beforeAll, describe, expect, it } from 'vitest'

// What an unauthenticated request costs must grow no faster than its body, on every entry point,
// whatever the body holds (the contract's Cost paragraph). Each entry point × shape below is timed
// refusing a body of just over 16 KiB and one of 64 KiB, in the same process, interleaved, by this process's CPU
// time (steadier than the wall clock on a shared machine), median of several batches; linear work
// reads about 4×, quadratic 16×. The test judges that growth, never an absolute time.
//
// Both sizes stay within the Gson fallback's bound (64 KiB), where the signature path does the most
// per byte, and both are past the bound of the one-shot hash (16 KiB), below which an HMAC costs
// less per byte: straddled, that step read as growth (7 to 8.7× on a loaded machine, for a linear
// path with three secrets); a string decoded from either stays under V8's large-object size
// (128 KiB), past which allocating one costs about ten times more per byte, a step that would read
// as growth here; and a quadratic path fails in seconds, not minutes. To cover a new entry point
// or shape, add a row to ENTRY_POINTS (a row that needs other sizes names them, and why) or to
// HOSTILE_SHAPES (testkit/src/hostile.ts, which the adversarial benchmark reads too).

/** The two sizes: 4× apart but one byte, with the same code on both. */
const SMALL = 16 * 1024 + 1
const LARGE = 64 * 1024
/** Well under 16× (quadratic), well over the 4× of linear work plus the noise of a shared machine. */
const GROWTH_LIMIT = 8
/**
 * Three rounds, batches of about 5 ms of CPU at the smaller size, no round started after 4 s of CPU.
 * Quadratic work reads about 16× in every round, so the median of three tells it as surely as one
 * of five did; a reading of the limit or more is looked at again, longer (settledRatio), before it
 * fails. Five rounds made this file the suite's largest user of CPU.
 */
const TIMING = { rounds: 3, batchMs: 5, budgetMs: 4000 }

const SECRETS = ['complexity-secret-one-4c1e', 'complexity-secret-two-9a7f', 'complexity-secret-three-2b5d']
const BOGUS_SIGNATURE = 'ab'.repeat(32)
const OAUTH = { mode: 'oauth2', appId: 'wx-app-complexity', secret: 'complexity-app-secret-7e31d0c9' } as const
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const JSON_TYPE = { 'content-type': 'application/json' }

const encoder = new TextEncoder()
const decoder = new TextDecoder()

interface EntryPoint {
  name: string
  /** Only the bodies this says, where the others are not refused by hookguard (see the row). */
  measures?: (shape: HostileShape) => boolean
  /** The statuses a request to it may be answered with, the body being what it is; never a 2xx where one must authenticate. */
  statuses: readonly number[]
  /** One request for `body`, made afresh for each call (outside nothing: its cost is part of the figure). */
  call(body: Uint8Array): () => Promise<number>
  /** The two sizes, when not {@link SMALL} and {@link LARGE} (see the row). */
  sizes?: readonly [number, number]
}

const receivers: Record<string, Receiver> = {}
/** A token of the right app and shape, signed with a key derived from another secret: checked in full, then refused. */
let forgedToken = ''

const verify = (receiver: string, request: (body: Uint8Array) => IncomingRequest) => (body: Uint8Array) => async () => {
  const result = await (receivers[receiver] as Receiver).verify(request(body))
  return result.ok ? 200 : result.response.status
}
const token = (request: (body: Uint8Array) => IncomingRequest) => (body: Uint8Array) => async () =>
  (await (receivers.token as Receiver).token(request(body))).status

const post = (body: Uint8Array, headers: Record<string, string>, url = '/hooks'): IncomingRequest => ({
  method: 'POST',
  url,
  headers,
  body,
})

const ENTRY_POINTS: readonly EntryPoint[] = [
  {
    name: "mode 'secret', one secret, a signature that matches nothing",
    statuses: [401],
    call: verify('secret', (body) => post(body, { ...JSON_TYPE, 'x-service-hmac-signature': BOGUS_SIGNATURE })),
  },
  {
    name: "mode 'secret', three secrets",
    statuses: [401],
    call: verify('secrets', (body) => post(body, { ...JSON_TYPE, 'x-service-hmac-signature': BOGUS_SIGNATURE })),
  },
  {
    name: "mode 'secret', unicodeWhitespace",
    statuses: [401],
    call: verify('unicode', (body) => post(body, { ...JSON_TYPE, 'x-service-hmac-signature': BOGUS_SIGNATURE })),
  },
  {
    name: "mode 'basic', a wrong password",
    statuses: [401],
    call: verify('basic', (body) => post(body, { ...JSON_TYPE, authorization: formatBasicAuthorization('hook-user', 'guess') })),
  },
  {
    name: "mode 'oauth2', a forged token in the query",
    statuses: [401],
    call: verify('oauth2', (body) => post(body, JSON_TYPE, `/hooks?access_token=${forgedToken}`)),
  },
  {
    name: "mode 'oauth2', a forged Bearer token",
    statuses: [401],
    call: verify('oauth2', (body) => post(body, { ...JSON_TYPE, authorization: `Bearer ${forgedToken}` })),
  },
  {
    // A form of more than MAX_FORM_FIELDS fields is refused as such (400) before its token is looked for.
    name: "mode 'oauth2', a form with no token",
    statuses: [400, 401],
    call: verify('oauth2', (body) => post(body, FORM)),
  },
  {
    name: "mode 'oauth2', a form with a forged token as its last field",
    statuses: [400, 401],
    call: (body) => {
      const withToken = new Uint8Array([...body, ...encoder.encode(`&access_token=${forgedToken}`)])
      return verify('oauth2', (form) => post(form, FORM))(withToken)
    },
  },
  {
    // Nothing authenticates. A body that is JSON within maxDepth is handed on: parsing it is the
    // application's own cost, and V8's (its decode and JSON.parse step up between 16 and 64 KiB).
    // Every other body is refused by hookguard's own pass over the bytes, before either: measured
    // here on every shape that is not JSON, those valid up to their last byte included.
    name: "mode 'none', a body that is not JSON or nests deeper than maxDepth",
    measures: (shape) => !isJson(shape.build(SMALL)),
    statuses: [400],
    call: verify('none', (body) => post(body, JSON_TYPE)),
  },
  {
    // Where anyone can queue: a JSON body goes through the hand-off, its fingerprint, its key and
    // the job (the payload, the bytes in base64), to a queue that takes everything at once (the
    // queue's own cost is Redis's or Cloudflare's, not the receiver's). Parsed by V8 here, so
    // measured below the step its decode and JSON.parse take between 16 and 64 KiB.
    name: "mode 'none' with handoff, a body that is JSON: queued",
    measures: (shape) => isJson(shape.build(SMALL)),
    statuses: [202],
    sizes: [4 * 1024, 16 * 1024],
    call: verify('handoff', (body) => post(body, JSON_TYPE)),
  },
  {
    name: 'the token address, a GET with the body as its query',
    statuses: [400, 401],
    call: (body) => {
      const query = decoder.decode(body)
      return token(() => ({ method: 'GET', url: `/token?${query}`, headers: {}, body: null }))(body)
    },
  },
  {
    name: 'the token address, a form POST',
    statuses: [400, 401, 413],
    call: token((body) => post(body, FORM, '/token')),
  },
]

/** JSON that a receiver with the default `maxDepth` takes. */
function isJson(body: Uint8Array): boolean {
  if (nestsDeeperThan(body, DEFAULT_MAX_DEPTH)) return false
  try {
    JSON.parse(decoder.decode(body))
    return true
  } catch {
    return false
  }
}

beforeAll(async () => {
  const make = (options: WebhookOptions, role?: 'token') => createReceiver(options, role && { role })
  receivers.secret = make({ auth: { mode: 'secret', secret: SECRETS[0] as string } })
  receivers.secrets = make({ auth: { mode: 'secret', secret: SECRETS } })
  receivers.unicode = make({ auth: { mode: 'secret', secret: SECRETS[0] as string, unicodeWhitespace: true } })
  receivers.basic = make({ auth: { mode: 'basic', username: 'hook-user', password: 'complexity-password-5d2a' } })
  receivers.oauth2 = make({ auth: OAUTH })
  // The token address's limit holds whatever maxBodySize is.
  receivers.token = make({ auth: OAUTH, maxBodySize: 16 * 1024 * 1024 }, 'token')
  receivers.none = make({ auth: { mode: 'none' } })
  receivers.handoff = make({
    auth: { mode: 'none' },
    handoff: { queue: { enqueue: async (job) => ({ jobId: job.id, duplicate: false }) } },
  })
  const other = make({ auth: { ...OAUTH, secret: 'another-app-secret-0f9b3e2a71' } }, 'token')
  const answer = await other.token({
    method: 'GET',
    url: `/token?${new URLSearchParams({ appid: OAUTH.appId, secret: 'another-app-secret-0f9b3e2a71', grant_type: 'client_credentials' })}`,
    headers: {},
    body: null,
  })
  forgedToken = (JSON.parse(answer.body) as { access_token: string }).access_token
}, 30_000)

describe('the cost of a refused request grows no faster than its body', () => {
  const built = new Map<string, Uint8Array>()
  const body = (shape: HostileShape, size: number) => {
    const key = `${shape.id}:${size}`
    if (!built.has(key)) built.set(key, shape.build(size))
    return built.get(key) as Uint8Array
  }
  for (const entry of ENTRY_POINTS) {
    describe(entry.name, () => {
      const [smallSize, largeSize] = entry.sizes ?? [SMALL, LARGE]
      for (const shape of HOSTILE_SHAPES) {
        if (entry.measures !== undefined && !entry.measures(shape)) continue
        it(shape.label, async () => {
          const [small, large] = [body(shape, smallSize), body(shape, largeSize)]
          const callSmall = entry.call(small)
          const callLarge = entry.call(large)
          // Answered as it must be at both sizes; this also warms both paths up.
          for (const call of [callSmall, callLarge]) expect(entry.statuses).toContain(await call())
          // Looked at again before calling it quadratic (settledRatio): quadratic work reads about
          // 16× every time; noise does not come back three times in a row.
          const { ratio, aMs: smallMs, bMs: largeMs } = await settledRatio(callSmall, callLarge, GROWTH_LIMIT, TIMING)
          const figures = `${smallMs.toFixed(3)} ms at ${smallSize} bytes, ${largeMs.toFixed(3)} ms at ${largeSize} bytes: ×${ratio.toFixed(1)}`
          expect(ratio, figures).toBeLessThan(GROWTH_LIMIT)
        }, 120_000)
      }
    })
  }
})

describe('the token address reads no more than a token request needs', () => {
  /** A stream of `total` bytes of form fields, in 1 KiB chunks, that counts what was pulled from it. */
  function countingStream(total: number): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
    const chunk = encoder.encode('scope=x&'.repeat(128))
    let pulled = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= total) return controller.close()
        pulled += chunk.length
        controller.enqueue(chunk)
      },
    })
    return { stream, pulled: () => pulled }
  }

  it(`keeps nothing of a streamed body past ${TOKEN_MAX_BODY_SIZE} bytes, whatever maxBodySize is: the rest is read only to be discarded`, async () => {
    const { stream, pulled } = countingStream(256 * 1024)
    const answer = await (receivers.token as Receiver).token({ method: 'POST', url: '/token', headers: FORM, body: stream })
    expect([answer.status, JSON.parse(answer.body).error, answer.headers.connection]).toEqual([413, 'payload_too_large', undefined])
    // Drained to its end (RFC 9112 §9.6), so a sender that writes it all before reading reads the answer.
    expect(pulled()).toBe(256 * 1024)
  })

  it('refuses a declared Content-Length over the limit, discarding the body it declares', async () => {
    const { stream, pulled } = countingStream(256 * 1024)
    const answer = await (receivers.token as Receiver).token({
      method: 'POST',
      url: '/token',
      headers: { ...FORM, 'content-length': String(256 * 1024) },
      body: stream,
    })
    expect([answer.status, answer.headers.connection]).toEqual([413, undefined])
    expect(pulled()).toBe(256 * 1024)
  })
})
