import { sign } from '@hookguard/core'
import { type StripperKind, stripJavaWhitespace, whitespaceStripper } from '@hookguard/core/adapter'
import { makePayload, random } from '@hookguard/testkit/payload'
import { assert, same, type Tally } from './reply.ts'

// Which stripper removes Java's whitespace on this runtime, and the two things the WebAssembly
// one relies on there: Web Crypto copies the bytes it is handed when `sign` or `digest` is called
// (the Web build hands it a view of the kernel's memory, which the next delivery overwrites), and
// the kernel strips what the portable JavaScript strips.

const WHITESPACE = [0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d]
const SECRET = 'whsec-runtime-stripper'
const MIB = 1024 * 1024
const encoder = new TextEncoder()

const hex = (buffer: ArrayBuffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('')

/** The service's signature of text already without whitespace, by Web Crypto alone. */
async function signedByWebCrypto(text: Uint8Array): Promise<string> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return hex(await crypto.subtle.sign('HMAC', key, text as Uint8Array<ArrayBuffer>))
}

/** Byte by byte: the reference both strippers are held to. */
const reference = (body: Uint8Array) => body.filter((b) => !WHITESPACE.includes(b))

/** A body of `length` bytes, each Java whitespace with probability `density`, else printable ASCII or a UTF-8 lead/continuation byte. */
function body(next: () => number, length: number, density: number): Uint8Array {
  const out = new Uint8Array(length)
  for (let i = 0; i < length; i++) {
    out[i] =
      next() < density
        ? (WHITESPACE[Math.floor(next() * 6)] as number)
        : next() < 0.9
          ? 0x21 + Math.floor(next() * 94)
          : 0x80 + Math.floor(next() * 128)
  }
  return out
}

const DESCRIPTION: Record<StripperKind, string> = {
  'wasm-import': 'the WebAssembly kernel, from the .wasm module the bundle imports',
  'wasm-bytes': 'the WebAssembly kernel, compiled from its bytes',
  js: 'the portable JavaScript (no WebAssembly)',
}

/**
 * Memory for the copy checks: a WebAssembly memory's buffer where there is WebAssembly (what the
 * kernel's result is a view of), else a plain one.
 */
function scratch(size: number): Uint8Array {
  if (typeof WebAssembly === 'undefined') return new Uint8Array(size)
  const memory = new WebAssembly.Memory({ initial: Math.ceil((size + 1) / 65536) })
  return new Uint8Array(memory.buffer, 1, size)
}

export async function checkStripper(tally: Tally, expected: StripperKind): Promise<void> {
  await tally.check(`core: Java's whitespace is stripped by ${DESCRIPTION[expected]}`, () => {
    same(whitespaceStripper(), expected, 'whitespaceStripper()')
  })

  await tally.check(
    'Web Crypto copies what sign and digest are given when called: bytes overwritten right after the call do not count',
    async () => {
      const keys = await Promise.all(
        ['one', 'two', 'three'].map((secret) =>
          crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']),
        ),
      )
      const next = random(7)
      for (const size of [1, 100, 16 * 1024, 70_000, MIB]) {
        const original = body(next, size, 0.2)
        const view = scratch(size)
        view.set(original)
        // Every key's sign and the digest called in one go, as the Web build does, then the bytes overwritten.
        const signed = keys.map((key) => crypto.subtle.sign('HMAC', key, view as Uint8Array<ArrayBuffer>))
        const digested = crypto.subtle.digest('SHA-256', view as Uint8Array<ArrayBuffer>)
        view.fill(0x78)
        const copy = original.slice()
        const want = await Promise.all(keys.map((key) => crypto.subtle.sign('HMAC', key, copy)))
        same((await Promise.all(signed)).map(hex), want.map(hex), `HMACs of ${size} bytes`)
        same(hex(await digested), hex(await crypto.subtle.digest('SHA-256', copy)), `SHA-256 of ${size} bytes`)
      }
    },
  )

  await tally.check(
    'core: sign strips what the portable JavaScript strips, for bodies of every length to 4 KiB, around 1 MiB and the benchmark shapes',
    async () => {
      const next = random(11)
      const bodies: Uint8Array[] = []
      for (let length = 0; length <= 4096; length += length < 256 ? 1 : 61)
        bodies.push(body(next, length, [0, 0.02, 0.3, 1][length % 4] as number))
      for (const length of [MIB - 1, MIB, MIB + 1]) bodies.push(body(next, length, 0.25))
      for (const shape of ['compact', 'pretty', 'gson'] as const) {
        for (const size of [1024, 65536, MIB]) bodies.push(makePayload(shape, size, '').bytes)
      }
      // Misaligned views of a larger buffer, as a body read into a pooled buffer would be.
      bodies.push(body(next, 5000, 0.3).subarray(3, 4001))
      for (const input of bodies) {
        const want = reference(input)
        const js = stripJavaWhitespace(input)
        assert(js.length === want.length && js.every((b, i) => b === want[i]), `the JavaScript stripper differs at ${input.length} bytes`)
        same(await sign(input, SECRET), await signedByWebCrypto(want), `sign of ${input.length} bytes`)
      }
    },
  )

  await tally.check('core: concurrent signs each get their own body, though the stripper reuses its memory', async () => {
    const next = random(13)
    const bodies = Array.from({ length: 64 }, (_, i) => body(next, 200 + ((i * 7919) % 20_000), 0.3))
    const got = await Promise.all(bodies.map((input) => sign(input, SECRET)))
    const want = await Promise.all(bodies.map((input) => signedByWebCrypto(reference(input))))
    same(got, want, 'signatures')
  })
}
