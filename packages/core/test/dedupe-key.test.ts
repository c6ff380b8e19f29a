import { createHash, pbkdf2Sync } from 'node:crypto'
import { describe, expect, it, vi } from 'vitest'
import { backend } from '#crypto'
import {
  createReceiver,
  type DedupeStore,
  type IncomingRequest,
  MAX_STORED_KEY_LENGTH,
  memoryDedupeStore,
  sign,
  type WebhookOptions,
} from '../src/index.ts'

// The key a delivery is claimed under is kept in a store that outlives a deploy (Redis): a key
// that changed between two versions would run again, during a rolling upgrade, a delivery the
// old version handled. So its derivation is pinned here, computed apart from the library.

const BODY = '{"event":"order.paid","data":{"orderNo":"SO-1"}}'
const SALT = 'hookguard dedupe scope'

const slowScope = (identity: string) => pbkdf2Sync(identity, SALT, 100_000, 32, 'sha256').subarray(0, 16).toString('hex')
const fastScope = (identity: string) => createHash('sha256').update(identity).digest().subarray(0, 16).toString('hex')

/** The key a receiver with these options claims for `request`. */
/** A memory store that notes every key it is asked to claim. */
function recordingStore(): { keys: string[]; store: DedupeStore } {
  const keys: string[] = []
  const store = memoryDedupeStore()
  return {
    keys,
    store: {
      claim: (key, ttlMs) => {
        keys.push(key)
        return store.claim(key, ttlMs)
      },
    },
  }
}

async function claimedKey(auth: WebhookOptions['auth'], request: IncomingRequest): Promise<{ key: string; fingerprint: string }> {
  const { keys, store: recording } = recordingStore()
  const result = await createReceiver({ auth, dedupe: { store: recording } }).verify(request)
  if (!result.ok) throw new Error(`expected a verified delivery, got ${result.response.status}`)
  return { key: keys[0] as string, fingerprint: result.delivery.fingerprint }
}

const post = (url: string, headers: Record<string, string> = {}, body = BODY): IncomingRequest => ({ method: 'POST', url, headers, body })
const basicHeader = (user: string, password: string) => ({ authorization: `Basic ${btoa(`${user}:${password}`)}` })

describe('the dedupe key of a delivery, as stored', () => {
  it('mode secret: the signing secret, through PBKDF2', async () => {
    const secret = 'whsec-key-derivation'
    const { key, fingerprint } = await claimedKey(
      { mode: 'secret', secret: ['whsec-other', secret] },
      post('/hooks', { 'x-service-hmac-signature': await sign(BODY, secret) }),
    )
    expect(key).toBe(`${slowScope(`secret\n${secret}`)}:${fingerprint}`)
  })

  it('mode basic: the configured credentials, through PBKDF2', async () => {
    const { key, fingerprint } = await claimedKey(
      { mode: 'basic', username: 'service', password: 'pw-key-derivation' },
      post('/hooks', basicHeader('service', 'pw-key-derivation')),
    )
    expect(key).toBe(`${slowScope('basic\nservice\npw-key-derivation')}:${fingerprint}`)
  })

  it('mode basic with verify: the user name accepted, hashed', async () => {
    const { key, fingerprint } = await claimedKey({ mode: 'basic', verify: () => true }, post('/hooks', basicHeader('tenant-7', 'pw')))
    expect(key).toBe(`${fastScope('basic-user\ntenant-7')}:${fingerprint}`)
  })

  it('mode oauth2: the app id, hashed', async () => {
    const auth = { mode: 'oauth2', appId: 'wx-key-derivation', secret: 'oauth-key-derivation-secret' } as const
    const issuer = createReceiver({ auth }, { role: 'token' })
    const issued = await issuer.token({
      method: 'GET',
      url: `/token?appid=${auth.appId}&secret=${auth.secret}&grant_type=client_credentials`,
      headers: {},
      body: null,
    })
    const token = JSON.parse(issued.body).access_token as string
    const { key, fingerprint } = await claimedKey(auth, post(`/hooks?access_token=${token}`))
    expect(key).toBe(`${fastScope('oauth2\nwx-key-derivation')}:${fingerprint}`)
  })

  it('mode none: the path in lower case, without trailing slashes, hashed', async () => {
    const { key, fingerprint } = await claimedKey({ mode: 'none' }, post('/Hooks/Tenant-A//?retry=2'))
    expect(key).toBe(`${fastScope('none\n/hooks/tenant-a')}:${fingerprint}`)
  })
})

describe('the derivation of a scope from secrets', () => {
  it('runs once per identity, not once per delivery', async () => {
    const secret = 'whsec-derived-once'
    const receiver = createReceiver({ auth: { mode: 'secret', secret }, dedupe: {} })
    const derive = vi.spyOn(backend, 'pbkdf2Sha256')
    try {
      for (const orderNo of ['SO-1', 'SO-2', 'SO-3']) {
        const body = `{"event":"order.paid","data":{"orderNo":"${orderNo}"}}`
        const result = await receiver.verify(post('/hooks', { 'x-service-hmac-signature': await sign(body, secret) }, body))
        expect(result.ok).toBe(true)
      }
      expect(derive).toHaveBeenCalledTimes(1)
    } finally {
      derive.mockRestore()
    }
  })

  it('is tried again for the next delivery when it failed', async () => {
    const secret = 'whsec-derivation-fails-once'
    const receiver = createReceiver({ auth: { mode: 'secret', secret }, dedupe: {} })
    const derive = vi.spyOn(backend, 'pbkdf2Sha256').mockRejectedValueOnce(new Error('out of memory'))
    try {
      const request = post('/hooks', { 'x-service-hmac-signature': await sign(BODY, secret) })
      await expect(receiver.verify(request)).rejects.toThrow('out of memory')
      const retried = await receiver.verify(request)
      expect(retried.ok).toBe(true)
      expect(derive).toHaveBeenCalledTimes(2)
    } finally {
      derive.mockRestore()
    }
  })
})

describe("a key of the app's own, as stored", () => {
  /** The keys a receiver whose dedupe.key is the payload's `id` gives its store, one delivery each. */
  async function storedKeys(ids: readonly string[]): Promise<string[]> {
    const { keys, store: recording } = recordingStore()
    const receiver = createReceiver({
      auth: { mode: 'none' },
      dedupe: { store: recording, key: (_req, delivery) => (delivery.payload as { id: string }).id },
    })
    for (const id of ids) {
      const result = await receiver.verify(post('/hooks', { 'content-type': 'application/json' }, JSON.stringify({ id })))
      expect(result.ok).toBe(true)
    }
    return keys
  }

  it('is given to the store as it is when short and well-formed', async () => {
    expect(await storedKeys(['order-1', 'é-中-😀'])).toEqual(['order-1', 'é-中-😀'])
  })

  it('is hashed when it holds a lone surrogate, so that it stays apart from U+FFFD and from another lone surrogate', async () => {
    const keys = await storedKeys(['K\ud800', 'K\udbff', 'K\ufffd', 'K\udc00'])
    expect(keys[2]).toBe('K\ufffd')
    for (const key of [keys[0], keys[1], keys[3]]) expect(key).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(new Set(keys).size).toBe(4)
  })

  it(`is hashed when longer than ${MAX_STORED_KEY_LENGTH} characters, and two such keys stay apart`, async () => {
    const long = 'x'.repeat(MAX_STORED_KEY_LENGTH)
    const keys = await storedKeys([long, `${long}a`, `${long}b`])
    expect(keys[0]).toBe(long)
    expect(keys[1]).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(keys[2]).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(keys[1]).not.toBe(keys[2])
    expect(keys[1]).toBe(
      `sha256:${createHash('sha256')
        .update(Buffer.from(`${long}a`, 'utf16le'))
        .digest('hex')}`,
    )
  })
})
