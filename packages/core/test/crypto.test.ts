import { describe, expect, it, vi } from 'vitest'
import { backend as active } from '#crypto'
import { backend as node } from '../src/crypto/node.ts'
import { backend as web } from '../src/crypto/web.ts'
import { stripJavaWhitespace } from '../src/strip.ts'

const encode = (text: string) => new TextEncoder().encode(text)
const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')

describe('the crypto backends', () => {
  it('agree on HMAC-SHA256, byte for byte (RFC 4231 test case 2)', async () => {
    const expected = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'
    for (const backend of [node, web]) {
      const key = await backend.importHmacKey(encode('Jefe'))
      expect((await backend.hmac([key], encode('what do ya want for nothing?'))).map(hex)).toEqual([expected])
    }
  })

  it('agree on SHA-256', async () => {
    const expected = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
    for (const backend of [node, web]) expect(hex(await backend.sha256(encode('abc')))).toBe(expected)
  })

  it('agree on PBKDF2-HMAC-SHA256 (RFC 7914 §11, 1 round)', async () => {
    const expected = '55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc'
    for (const backend of [node, web]) expect(hex(await backend.pbkdf2Sha256(encode('passwd'), encode('salt'), 1))).toBe(expected)
  })

  it('are chosen by export condition: Node crypto on Node, Web Crypto elsewhere', () => {
    // Each vitest project that runs this file says which build it resolves.
    expect(active).toBe({ node, web }[process.env.EXPECTED_CRYPTO as 'node' | 'web'])
  })
})

describe('HMAC on the Node build', () => {
  const keyLengths = [1, 33, 63, 64, 65, 200]
  // Around the block size, and on either side of the size where a one-shot hash gives way to createHmac.
  const sizes = [0, 1, 55, 56, 64, 1000, 16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 70_000]

  it('agrees with Web Crypto for keys around the block size and bodies of every size', async () => {
    for (const keyLength of keyLengths) {
      const secret = Uint8Array.from({ length: keyLength }, (_, i) => (i * 37 + keyLength) & 0xff)
      const keys = [await node.importHmacKey(secret), await node.importHmacKey(encode('second'))]
      const webKeys = [await web.importHmacKey(secret), await web.importHmacKey(encode('second'))]
      for (const size of sizes) {
        const data = Uint8Array.from({ length: size }, (_, i) => (i * 11) & 0xff)
        expect((await node.hmac(keys, data)).map(hex), `key ${keyLength}, body ${size}`).toEqual((await web.hmac(webKeys, data)).map(hex))
      }
    }
  })

  it('hashes with the right key pads after its scratch memory grows, one key throughout', async () => {
    // A fresh module: its scratch memory is still the small size, so a 2 KiB body makes it grow.
    vi.resetModules()
    const { backend: fresh } = await import('../src/crypto/node.ts')
    const key = await fresh.importHmacKey(encode('whsec-demo'))
    const webKey = await web.importHmacKey(encode('whsec-demo'))
    for (const size of [2, 2048, 3]) {
      const data = new Uint8Array(size).fill(0x62)
      expect((await fresh.hmac([key], data)).map(hex), `body ${size}`).toEqual((await web.hmac([webKey], data)).map(hex))
    }
  })

  it('leaves no trace of a longer body in a shorter one', async () => {
    const key = await node.importHmacKey(encode('whsec-demo'))
    const webKey = await web.importHmacKey(encode('whsec-demo'))
    await node.hmac([key], new Uint8Array(5000).fill(0x61))
    expect((await node.hmac([key], encode('{}'))).map(hex)).toEqual((await web.hmac([webKey], encode('{}'))).map(hex))
  })
})

describe('canonicalHmac', () => {
  it('is the HMAC of the body with Java whitespace removed, on both builds, for every key', async () => {
    const body = encode('{ "a" :\t1,\n"b":\x0B2\f,\r"c": "x y\u3000z" }')
    for (const backend of [node, web]) {
      const keys = await Promise.all(['one', 'two'].map((s) => backend.importHmacKey(encode(s))))
      expect((await backend.canonicalHmac(keys, body)).map(hex)).toEqual((await backend.hmac(keys, stripJavaWhitespace(body))).map(hex))
    }
  })
})
