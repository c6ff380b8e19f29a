import { ApiError, createClient, type StoredToken } from '@hookguard/client'
import * as core from '@hookguard/core'
import * as protocol from '@hookguard/core/adapter'
import { WebhookError as WebhookErrorFromHono, webhook } from '@hookguard/hono'
import fixtures from '@hookguard/testkit/signatures.json' with { type: 'json' }
import { Hono } from 'hono'
import { MOCK_APP } from './mock-app.ts'
import { assert, same, type Tally } from './reply.ts'
import { runtimeKind } from './runtime-name.ts'

export type Build = 'node' | 'web' | 'edge'

/** A customer `mockService` knows by default; its `+` has to survive the query encoding. */
const KNOWN_MOBILE = '+8613800138000'

/**
 * Which of the core's builds the runtime loaded. `reference` is that build imported by its file
 * path; the same module instance means `@hookguard/core`, as the runtime (or the bundler, for the
 * Web build) resolved it, is that file.
 */
export async function checkBuild(tally: Tally, build: Build, reference: { sign?: unknown } | undefined): Promise<void> {
  await tally.check(`@hookguard/core resolves to its ${build} build (dist/${build}/index.js)`, () => {
    assert(reference?.sign === core.sign, `@hookguard/core is not the module at packages/core/dist/${build}/index.js`)
  })
  await tally.check('@hookguard/hono uses that same core', () => {
    assert(WebhookErrorFromHono === core.WebhookError, '@hookguard/hono loaded a second copy of @hookguard/core')
  })
}

/** The service's own signatures and Basic headers (`testkit/src/signatures.json`) against the core. */
export async function checkCore(tally: Tally): Promise<void> {
  // These two were signed over another form of the body they carry, which `sign` does not produce.
  const signedOverFallback: Record<string, (body: Uint8Array) => Uint8Array | undefined> = {
    'url-with-query/unescaped-body': protocol.escapeLikeGson,
    'fullwidth-space-in-name/js-strip': protocol.stripUnicodeWhitespace,
  }
  for (const vector of fixtures.vectors) {
    const verdict = vector.valid ? 'accepts' : 'refuses'
    const options = { unicodeWhitespace: vector.unicodeWhitespace === true }
    await tally.check(`core: verifySignature ${verdict} ${vector.name} (text)`, async () => {
      same(await core.verifySignature(vector.body, vector.signature, vector.secret, options), vector.valid, 'verified')
    })
    await tally.check(`core: verifySignature ${verdict} ${vector.name} (the bytes on the wire)`, async () => {
      const bytes = Uint8Array.from(atob(vector.bodyBase64), (char) => char.charCodeAt(0))
      same(
        await core.verifySignature(bytes, vector.signature, [`${vector.secret}-rotated`, vector.secret], options),
        vector.valid,
        'verified',
      )
    })
    if (options.unicodeWhitespace) {
      await tally.check(`core: verifySignature refuses ${vector.name} without unicodeWhitespace`, async () => {
        same(await core.verifySignature(vector.body, vector.signature, vector.secret), false, 'verified')
      })
    }
    if (!vector.valid) continue
    await tally.check(`core: sign reproduces the service's signature for ${vector.name}`, async () => {
      const body = new TextEncoder().encode(vector.body)
      same(await core.sign(signedOverFallback[vector.name]?.(body) ?? body, vector.secret), vector.signature, 'signature')
    })
  }
  for (const { username, password, header } of fixtures.basic.cases) {
    await tally.check(`core: Basic credentials ${JSON.stringify(username)} are formatted and parsed as the service does`, () => {
      same(protocol.formatBasicAuthorization(username, password), header, 'Authorization')
      same(protocol.parseBasicAuthorization(header), { username, password }, 'parsed')
    })
  }
  await checkReceiptBounds(tally)
  await checkWatchTimers(tally)
}

/**
 * A body read to be judged must keep arriving: each runtime watches it with the timers it has (one
 * shared by every body where a timer is the process's, one per body where it is the request's), so
 * each runtime shows it. The bounds are the tests' own, short; the stream is the runtime's own.
 */
async function checkReceiptBounds(tally: Tally): Promise<void> {
  const receipt = { ms: 600, idleMs: 150 }
  const bodies: [string, (controller: ReadableStreamDefaultController<Uint8Array>) => () => void, number][] = [
    [
      'stops sending',
      (controller) => {
        controller.enqueue(new Uint8Array(16))
        return () => {}
      },
      receipt.idleMs,
    ],
    [
      'keeps sending a byte at a time',
      (controller) => {
        const every = setInterval(() => controller.enqueue(new Uint8Array(1)), 40)
        return () => clearInterval(every)
      },
      receipt.ms,
    ],
  ]
  for (const [what, start, bound] of bodies) {
    await tally.check(`core: readLimited refuses a body that ${what} within the limit as invalid_body, at ${bound} ms`, async () => {
      let stop = () => {}
      const stream = new ReadableStream<Uint8Array>({
        start: (controller) => {
          stop = start(controller)
        },
        cancel: () => stop(),
      })
      const started = Date.now()
      // The check's own limit, which also holds the process open: where the watch's timer may not
      // (Node's is unref'd, for a server's socket to hold), a stream of nothing but a promise would not.
      let limit: ReturnType<typeof setTimeout> | undefined
      const outcome = await Promise.race([
        protocol.readLimited(stream, 1024, undefined, undefined, receipt).then(
          () => 'read in full',
          (error: unknown) => (error instanceof core.WebhookError ? error.code : String(error)),
        ),
        new Promise<string>((resolve) => {
          limit = setTimeout(() => resolve('still reading'), bound + 1_500)
        }),
      ])
      const elapsed = Date.now() - started
      clearTimeout(limit)
      stop()
      same(outcome, 'invalid_body', 'refusal')
      // Late on a loaded machine, never early.
      assert(elapsed >= bound - 5, `refused after ${elapsed} ms`)
    })
  }
}

/**
 * Where a timer is the process's (Node, Bun, Deno), the bodies being read share one: a timer armed
 * and cleared per body costs several microseconds a delivery on Deno. In workerd a timer belongs to
 * the request that armed it, so each body keeps its own. Counted by the timers armed while twenty
 * bodies are being read.
 */
async function checkWatchTimers(tally: Tally): Promise<void> {
  const runtime = runtimeKind()
  const shared = runtime !== 'workerd'
  const bodies = 20
  await tally.check(
    `core: ${bodies} bodies being read arm ${shared ? 'one timer between them' : 'a timer each'} (${runtime})`,
    async () => {
      const g = globalThis as { setTimeout: typeof setTimeout }
      const original = g.setTimeout
      let armed = 0
      const counting = ((...args: Parameters<typeof setTimeout>) => {
        armed++
        return original(...args)
      }) as typeof setTimeout
      const closers: (() => void)[] = []
      const reads: Promise<Uint8Array>[] = []
      g.setTimeout = counting
      try {
        for (let i = 0; i < bodies; i++) {
          const stream = new ReadableStream<Uint8Array>({
            start: (controller) => {
              controller.enqueue(new Uint8Array([0x7b]))
              closers.push(() => controller.close())
            },
          })
          reads.push(protocol.readLimited(stream, 1024, undefined, undefined, { ms: 5_000, idleMs: 5_000 }))
        }
        // Every read has taken its first chunk and waits for the next.
        await Promise.resolve()
        await new Promise<void>((resolve) => original(resolve, 20))
      } finally {
        g.setTimeout = original
      }
      for (const close of closers) close()
      const read = await Promise.all(reads)
      same(
        read.map((bytes) => bytes.byteLength),
        Array.from({ length: bodies }, () => 1),
        'bytes read',
      )
      if (shared) assert(armed <= 1, `${armed} timers armed for ${bodies} bodies`)
      else same(armed, bodies, 'timers armed')
    },
  )
}

/**
 * Empty credentials are refused when the middleware is built, in every mode, so that an unset
 * environment variable never opens a receiver (the contract's Setup paragraph).
 */
export async function checkSetup(tally: Tally): Promise<void> {
  const empty: [string, core.WebhookAuth][] = [
    ["mode 'secret' with an empty secret", { mode: 'secret', secret: '' }],
    ["mode 'basic' with an empty password", { mode: 'basic', username: 'hook-user', password: '' }],
    ["mode 'oauth2' with an empty app secret", { mode: 'oauth2', appId: 'wx-app-1042', secret: '' }],
  ]
  for (const [what, auth] of empty) {
    await tally.check(`hono: webhook() throws a TypeError from @hookguard/ at setup for ${what}`, () => {
      let thrown: unknown
      try {
        webhook({ auth })
      } catch (error) {
        thrown = error
      }
      assert(thrown instanceof TypeError, `expected a TypeError, got ${thrown === undefined ? 'none' : String(thrown)}`)
      assert(thrown.message.startsWith('@hookguard/'), `the message does not name the package: ${thrown.message}`)
    })
  }
}

/** The promise of the Hono adapter's doc comment: the handler can still read the body itself. */
export async function checkBodyStillReadable(tally: Tally): Promise<void> {
  const vector = fixtures.vectors[0] as (typeof fixtures.vectors)[number]
  const app = new Hono()
  app.post('/hooks', webhook({ auth: { mode: 'secret', secret: vector.secret } }), async (c) => {
    const [json, text, bytes] = [await c.req.json<unknown>(), await c.req.text(), await c.req.arrayBuffer()]
    return c.json({ json, text, length: bytes.byteLength, same: JSON.stringify(json) === JSON.stringify(c.get('webhook').payload) })
  })
  await tally.check('hono: c.req.json(), c.req.text() and c.req.arrayBuffer() still work after webhook()', async () => {
    const res = await app.request('/hooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-hmac-signature': vector.signature },
      body: vector.body,
    })
    same(res.status, 200, 'status')
    const answer = (await res.json()) as { json: unknown; text: string; length: number; same: boolean }
    same(
      answer,
      { json: JSON.parse(vector.body), text: vector.body, length: new TextEncoder().encode(vector.body).byteLength, same: true },
      'answer',
    )
  })
}

/** `@hookguard/client` against the emulator's `mockService` at `baseUrl`, with this runtime's fetch. */
export async function checkClient(tally: Tally, baseUrl: string | undefined): Promise<void> {
  const name = (what: string) => `client: ${what}`
  if (baseUrl === undefined || baseUrl === '') {
    await tally.check(name('the mock service is reachable'), () => {
      throw new Error('no mock service URL was given (--mock=<url>)')
    })
    return
  }
  const options = { baseUrl, ...MOCK_APP }

  await tally.check(name('customers.query finds a customer by a mobile number with a +'), async () => {
    const found = await createClient(options).customers.query<{ total: number; data: { id: string }[] }>({ mobile: KNOWN_MOBILE })
    same(found.total, 1, 'total')
    same(found.data[0]?.id, 'c-1001', 'customer id')
  })

  await tally.check(name('concurrent calls share one token request, through the fetch option'), async () => {
    let tokenRequests = 0
    const client = createClient({
      ...options,
      fetch: (input, init) => {
        if (new URL(input).pathname.endsWith('/oauth2/token')) tokenRequests++
        return fetch(input, init)
      },
    })
    await Promise.all([1, 2, 3].map(() => client.customers.query({ mobile: KNOWN_MOBILE })))
    same(tokenRequests, 1, 'token requests')
    same(await client.token(), await client.token(), 'token reused')
  })

  await tally.check(name('token() fetches a new token once the current one is close to expiry'), async () => {
    let now = Date.now()
    const client = createClient({ ...options, clock: () => now })
    const first = await client.token()
    assert(/^mock-token-\d+$/.test(first), `unexpected token ${first}`)
    now += 7000_000
    assert((await client.token()) !== first, 'the token was not refreshed')
  })

  await tally.check(name('a 401 for a stored token fetches a new one and retries once'), async () => {
    let stored: StoredToken | undefined = { accessToken: 'revoked-token', expiresAt: Date.now() + 3600_000 }
    const tokenStore = {
      get: () => stored,
      set: (token: StoredToken) => {
        stored = token
      },
    }
    const client = createClient({ ...options, tokenStore })
    const found = await client.customers.query<{ total: number }>({ mobile: KNOWN_MOBILE })
    same(found.total, 1, 'total')
    assert(stored?.accessToken !== 'revoked-token', 'the renewed token was not stored')
  })

  await tally.check(name('a wrong app secret rejects with ApiError invalid_client, and no credential in it'), async () => {
    const wrong = 'not-the-secret-9d2c'
    const error = await createClient({ ...options, appSecret: wrong })
      .customers.query({ mobile: KNOWN_MOBILE })
      .then(
        () => undefined,
        (rejection: unknown) => rejection,
      )
    assert(error instanceof ApiError, `expected an ApiError, got ${String(error)}`)
    same([error.code, error.status], ['invalid_client', 401], 'code and status')
    assert(!JSON.stringify({ message: error.message, body: error.body }).includes(wrong), 'the error holds the secret')
  })
}
