import { describe, expect, it } from 'vitest'
import { backend as active } from '#crypto'
import { backend as node } from '../src/crypto/node.ts'
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
