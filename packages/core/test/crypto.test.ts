import { describe, expect, it } from 'vitest'
import { backend as active } from '#crypto'
import { hmacPaths, backend as node } from '../src/crypto/node.ts'
import { backend as web } from '../src/crypto/web.ts'

const encode = (text: string) => new TextEncoder().encode(text)
const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')

describe('the crypto backends', () => {
  it('agree on HMAC-SHA256, byte for byte (RFC 4231 test case 2)', async () => {
    const expected = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'
    for (const backend of [node, web]) {
      const key = await backend.importHmacKey(encode('Jefe'))
      expect(hex(await backend.hmacSha256(key, encode('what do ya want for nothing?')))).toBe(expected)
    }
  })

  it('agree on SHA-256', async () => {
    const expected = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
    for (const backend of [node, web]) expect(hex(await backend.sha256(encode('abc')))).toBe(expected)
  })

  it('are chosen by export condition: Node crypto on Node, Web Crypto elsewhere', () => {
    // Each vitest project that runs this file says which build it resolves.
    expect(active).toBe({ node, web }[process.env.EXPECTED_CRYPTO as 'node' | 'web'])
  })
})

describe("the Node backend's two HMAC paths", () => {
  const keyLengths = [1, 33, 63, 64, 65, 200]
  const sizes = [0, 1, 55, 56, 64, 1000, hmacPaths.ONE_SHOT_MAX - 1, hmacPaths.ONE_SHOT_MAX]

  it('agree with each other and with Web Crypto for keys around the block size and bodies up to the one-shot limit', async () => {
    expect(hmacPaths.oneShot(await node.importHmacKey(encode('k')), encode('x'))).toBeDefined()
    for (const keyLength of keyLengths) {
      const secret = Uint8Array.from({ length: keyLength }, (_, i) => (i * 37 + keyLength) & 0xff)
      const nodeKey = await node.importHmacKey(secret)
      const webKey = await web.importHmacKey(secret)
      for (const size of sizes) {
        const data = Uint8Array.from({ length: size }, (_, i) => (i * 11) & 0xff)
        const expected = hex(await web.hmacSha256(webKey, data))
        expect(hex(hmacPaths.oneShot(nodeKey, data) as Uint8Array), `key ${keyLength}, body ${size}`).toBe(expected)
        expect(hex(hmacPaths.streamed(nodeKey, data)), `key ${keyLength}, body ${size}`).toBe(expected)
      }
    }
  })

  it('leave no trace of a longer body in a shorter one', async () => {
    const key = await node.importHmacKey(encode('whsec-demo'))
    const long = new Uint8Array(5000).fill(0x61)
    hmacPaths.oneShot(key, long)
    expect(hex(hmacPaths.oneShot(key, encode('{}')) as Uint8Array)).toBe(hex(hmacPaths.streamed(key, encode('{}'))))
  })
})
