import { verifySignature } from '@hookguard/core'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { backend } from '#crypto'

// An unauthenticated request must cost at most a small multiple of one HMAC over its body per
// configured secret, whatever bytes it holds: counted here as the bytes handed to the HMAC.

const SECRETS = ['whsec-one-0a1b2c', 'whsec-two-3d4e5f', 'whsec-three-6a7b8c']
const BOGUS = 'ab'.repeat(32)
const SIZE = 256 * 1024

afterEach(() => {
  vi.restoreAllMocks()
})

const { hmac, canonicalHmac, gsonHmacSync } = backend

async function bytesHashed(body: Uint8Array, unicodeWhitespace: boolean): Promise<number> {
  let hashed = 0
  const spies = [
    vi.spyOn(backend, 'hmac').mockImplementation((keys, data) => {
      hashed += data.length * keys.length
      return hmac(keys, data)
    }),
    // The canonical text is at most the body: counted as the body, an upper bound.
    vi.spyOn(backend, 'canonicalHmac').mockImplementation((keys, data) => {
      hashed += data.length * keys.length
      return canonicalHmac(keys, data)
    }),
    // The Node build makes and hashes the Gson form in one synchronous call.
    ...(gsonHmacSync === undefined
      ? []
      : [
          vi.spyOn(backend as Required<typeof backend>, 'gsonHmacSync').mockImplementation((keys, data, maxEscapes) => {
            const made = gsonHmacSync(keys, data, maxEscapes)
            hashed += (made?.text.length ?? 0) * keys.length
            return made
          }),
        ]),
  ]
  try {
    expect(await verifySignature(body, BOGUS, SECRETS, { unicodeWhitespace })).toBe(false)
  } finally {
    for (const spy of spies) spy.mockRestore()
  }
  return hashed
}

const repeat = (text: string, size = SIZE) => new TextEncoder().encode(text.repeat(Math.ceil(size / new TextEncoder().encode(text).length)))

const adversarial: [string, Uint8Array][] = [
  ['a body of <', repeat('<')],
  ["a body just under a fifth of < > & = '", repeat(`<>&='${'x'.repeat(20)}`)],
  ['a body of U+2028 (Gson escapes it, and it is Unicode whitespace)', repeat('\u2028')],
  ['a body of U+3000', repeat('\u3000')],
  ['a body of spaces', repeat(' ')],
  ['a body of everything at once', repeat(`< \u3000=\u2028&x\u00a0'\t>`)],
  ['a compact body', repeat('{"a":"x"}')],
]

describe('verifySignature, against a signature that matches nothing', () => {
  for (const [label, body] of adversarial) {
    it(`hashes at most three times ${label} per secret, four with unicodeWhitespace`, async () => {
      expect(await bytesHashed(body, false)).toBeLessThanOrEqual(3 * body.length * SECRETS.length)
      expect(await bytesHashed(body, true)).toBeLessThanOrEqual(4 * body.length * SECRETS.length)
    })
  }

  it('hashes a body of 64 KiB or less, where the Gson form is made, at most three times per secret', async () => {
    // A fifth of the bytes escaped: the form is made, at its largest (twice the body), and counted.
    const body = repeat(`<>&='${'x'.repeat(20)}`, 64 * 1024 - 25)
    const hashed = await bytesHashed(body, false)
    expect(hashed).toBeGreaterThan(2 * body.length * SECRETS.length)
    expect(hashed).toBeLessThanOrEqual(3 * body.length * SECRETS.length)
  })

  it('hashes a body with nothing to escape and no Unicode whitespace once per secret', async () => {
    const body = repeat('{"name":"x y"}')
    expect(await bytesHashed(body, true)).toBeLessThanOrEqual(body.length * SECRETS.length)
  })
})
