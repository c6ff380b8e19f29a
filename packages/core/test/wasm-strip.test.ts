/**
 * The WebAssembly stripper against a plain reference: edge cases, every small pattern at every
 * alignment, random bodies, and call sequences meant to leak a previous call's bytes.
 */

import { makePayload, random } from '@hookguard/testkit/payload'
import { describe, expect, it, vi } from 'vitest'
import { compileStripWat } from '../../../scripts/build-wasm.ts'
import { backend } from '../src/crypto/node.ts'
import { STRIP_WASM_BASE64 } from '../src/crypto/strip-wasm-bytes.ts'
import { createWasmKernels, WASM_STRIP_MAX } from '../src/crypto/wasm-strip.ts'
import { stripJavaWhitespace } from '../src/strip.ts'

const WHITESPACE = [0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d]
const reference = (body: Uint8Array) => body.filter((b) => !WHITESPACE.includes(b))
/** Every byte that stays, including 0x00, 0x08, 0x0E, 0x1F, 0x21 and the UTF-8 range. */
const KEPT = Array.from({ length: 256 }, (_, b) => b).filter((b) => !WHITESPACE.includes(b))

// Deterministic, so a failure reproduces.
const next = random(20260101)
const pick = (list: readonly number[]) => list[Math.floor(next() * list.length)] as number

/** A body of `length` bytes, each whitespace with probability `density`, each byte random in its class. */
function body(length: number, density: number): Uint8Array {
  const out = new Uint8Array(length)
  for (let i = 0; i < length; i++) out[i] = next() < density ? pick(WHITESPACE) : pick(KEPT)
  return out
}

/** Bit i of `pattern` set: byte i is whitespace. */
function fromPattern(pattern: number, length: number, offset = 0): Uint8Array {
  // Placed at `offset` inside a larger buffer, so the body's own alignment varies too.
  const out = new Uint8Array(offset + length).subarray(offset)
  for (let i = 0; i < length; i++) out[i] = (pattern >>> i) & 1 ? pick(WHITESPACE) : pick(KEPT)
  return out
}

/** Compares by value, with a readable message; expect().toEqual on 1 MiB arrays is very slow. */
function check(strip: (body: Uint8Array) => Uint8Array, input: Uint8Array): void {
  const want = reference(input)
  const got = strip(input)
  if (got.length !== want.length || got.some((b, i) => b !== want[i])) {
    const show = (a: Uint8Array) => Buffer.from(a.subarray(0, 80)).toString('hex')
    expect.fail(`length ${input.length}: in ${show(input)}\n got ${show(got)} (${got.length})\nwant ${show(want)} (${want.length})`)
  }
}

describe('the WebAssembly stripper', () => {
  const strip = createWasmKernels()?.strip as (body: Uint8Array) => Uint8Array

  it('strips nothing from nothing', () => {
    expect(strip(new Uint8Array(0)).length).toBe(0)
  })

  it('returns the body itself when there is nothing to strip', () => {
    const input = body(1000, 0)
    expect(strip(input)).toBe(input)
  })

  it('keeps every byte value but the six, in order', () => {
    const all = Uint8Array.from({ length: 256 }, (_, b) => b)
    check(strip, all)
    // Each value filling a whole block, and one lane past it, at every position.
    for (let b = 0; b < 256; b++) {
      check(strip, new Uint8Array(17).fill(b))
      for (let lane = 0; lane < 16; lane++) {
        const block = new Uint8Array(16).fill(0x41)
        block[lane] = b
        check(strip, block)
      }
    }
  })

  it('handles every pattern up to 16 bytes, at every shift and alignment', () => {
    for (let length = 1; length <= 16; length++) {
      for (let pattern = 0; pattern < 1 << length; pattern++) check(strip, fromPattern(pattern, length))
    }
    // Shorter patterns again behind a prefix of 1-15 kept bytes, so they straddle block edges.
    for (let shift = 1; shift < 16; shift++) {
      for (let pattern = 0; pattern < 1 << 10; pattern++) {
        const input = fromPattern(pattern << shift, 10 + shift, shift)
        check(strip, input)
      }
    }
  })

  it('handles random patterns of 17 to 64 bytes at every alignment', () => {
    for (let length = 17; length <= 64; length++) {
      for (let offset = 0; offset < 16; offset++) {
        for (let n = 0; n < 40; n++) {
          const pattern = Math.floor(next() * 2 ** 32)
          const input = fromPattern(0, length, offset)
          // Two 32-bit halves of whitespace bits, every one of them random.
          for (let i = 0; i < length; i++) {
            const bit = i < 32 ? (pattern >>> i) & 1 : next() < 0.5
            if (bit) input[i] = pick(WHITESPACE)
          }
          check(strip, input)
        }
      }
    }
    // Runs: one kept byte in whitespace and one whitespace byte in kept bytes, everywhere.
    for (let length = 1; length <= 64; length++) {
      for (let at = 0; at < length; at++) {
        const lone = new Uint8Array(length).fill(0x20)
        lone[at] = 0x7b
        check(strip, lone)
        const hole = new Uint8Array(length).fill(0x7b)
        hole[at] = 0x0a
        check(strip, hole)
      }
    }
  })

  it('matches the reference on random bodies of every length to 600 bytes, others to 5000, and 1 MiB', () => {
    for (const density of [0, 0.01, 0.3, 1]) {
      for (let length = 0; length <= 5000; length += length < 600 ? 1 : 37) check(strip, body(length, density))
      check(strip, body(1024 * 1024, density))
    }
  })

  it('keeps UTF-8 multi-byte characters whole', () => {
    const text = '{\n  "name": "王伟 Müller",\t"city": "São Paulo 上海",\r\n  "emoji": "😀 ✓"\n}\u00a0\u3000'
    const got = new TextDecoder().decode(strip(new TextEncoder().encode(text)))
    // U+00A0 and U+3000 are not Java `\s`: only the six ASCII bytes go.
    expect(got).toBe(text.replace(/[ \t\n\v\f\r]/g, ''))
  })

  it('never leaks a previous call’s bytes, shrinking or growing', () => {
    // A long body of kept bytes leaves them behind in memory; shorter bodies must not pick them up.
    const sizes = [5000, 4999, 17, 16, 15, 1, 0, 33, 70000, 3, 200000, 31, 65536, 65521, 2]
    for (const size of sizes) {
      check(strip, new Uint8Array(size + 100).fill(0x78)) // stale 'x' everywhere past `size`
      for (const density of [0.01, 0.3, 1]) check(strip, body(size, density))
    }
    for (let n = 0; n < 300; n++) {
      const size = Math.floor(next() ** 3 * 150000)
      check(strip, body(size, pick([0, 1, 30, 100]) / 100))
    }
  })

  it('agrees with the JavaScript stripper on the benchmark payloads', () => {
    for (const shape of ['pretty', 'gson', 'compact'] as const) {
      for (const size of [1024, 65536, 1048576]) {
        const { bytes } = makePayload(shape, size, '')
        expect(Buffer.from(strip(bytes)).equals(stripJavaWhitespace(bytes))).toBe(true)
      }
    }
  })

  it('strips its own previous result, a view of its memory', () => {
    const input = body(3000, 0.3)
    const once = strip(input)
    const want = reference(once.slice())
    expect(Buffer.from(strip(once)).equals(want)).toBe(true)
  })
})

describe("the Node backend's canonicalHmac", () => {
  it('hashes what the portable stripper leaves, on either side of the WebAssembly size limit', async () => {
    const [key] = [await backend.importHmacKey(new TextEncoder().encode('whsec-demo'))] as const
    for (const length of [WASM_STRIP_MAX - 1, WASM_STRIP_MAX, WASM_STRIP_MAX + 1]) {
      const input = body(length, 0.2)
      expect(await backend.canonicalHmac([key], input)).toEqual(await backend.hmac([key], stripJavaWhitespace(input)))
    }
  })
})

describe('createWasmKernels without WebAssembly (node --jitless)', () => {
  it('returns undefined, so the portable stripper and Gson pass are used', () => {
    vi.stubGlobal('WebAssembly', undefined)
    try {
      expect(createWasmKernels()).toBeUndefined()
    } finally {
      vi.unstubAllGlobals()
    }
  })
})

describe('strip-wasm-bytes.ts', () => {
  it('holds what strip.wat compiles to, both kernels (pnpm build:wasm)', async () => {
    expect(Buffer.from(STRIP_WASM_BASE64, 'base64').equals(await compileStripWat())).toBe(true)
  })
})
