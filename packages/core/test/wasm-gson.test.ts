/**
 * The WebAssembly Gson pass (strip.wat, `gson`) against the portable one (canonical.ts,
 * `gsonText`): the same bytes and the same refusals on bodies built from the bytes either of them
 * treats apart, at lengths around the kernel's 16-byte blocks and escape counts around the bound.
 */

import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { gsonCandidate, gsonText, MAX_GSON_FALLBACK_BODY, maxGsonEscapes, mayHaveGsonForm } from '../src/canonical.ts'
import { backend } from '../src/crypto/node.ts'
import { stripModule } from '../src/crypto/strip-module.ts'
import { STRIP_WASM_BASE64 } from '../src/crypto/strip-wasm-bytes.ts'
import { createWasmKernels, type TransientGson } from '../src/crypto/wasm-strip.ts'
import { matchSignature, sign } from '../src/signature.ts'

const kernels = createWasmKernels(stripModule.load)
const gson = kernels?.gson as TransientGson

const bytes = (...list: number[]) => Uint8Array.from(list)
const utf8 = (text: string) => new TextEncoder().encode(text)

/** Everything either pass treats apart, and what it must leave alone. */
const UNITS: readonly Uint8Array[] = [
  ...[0x3c, 0x3e, 0x26, 0x3d, 0x27].map((b) => bytes(b)),
  bytes(0xe2, 0x80, 0xa8),
  bytes(0xe2, 0x80, 0xa9),
  // Broken or other sequences behind the same lead byte: never escaped.
  bytes(0xe2),
  bytes(0xe2, 0x80),
  bytes(0xe2, 0x80, 0xaa),
  bytes(0xe2, 0x80, 0x9c),
  bytes(0xe2, 0x81, 0xa8),
  bytes(0x80, 0xa8),
  ...[0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d].map((b) => bytes(b)),
  ...[...'ax"{}:,\\'].map(utf8),
  ...['é', '中', '😀', '\u00a0', '\u3000', '\u2027'].map(utf8),
]

/** How many escapes Gson writes for the body: the reference the bound is checked against. */
function escapesIn(body: Uint8Array): number {
  let count = 0
  for (let i = 0; i < body.length; i++) {
    const b = body[i] as number
    if ([0x3c, 0x3e, 0x26, 0x3d, 0x27].includes(b)) count++
    else if (b === 0xe2 && body[i + 1] === 0x80 && (body[i + 2] === 0xa8 || body[i + 2] === 0xa9)) {
      count++
      i += 2
    }
  }
  return count
}

/** Units up to `length`, the last one cut short if it does not fit (a broken sequence at the very end). */
function bodyOf(units: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length)
  let n = 0
  for (const unit of units) {
    if (n >= length) break
    const part = unit.subarray(0, length - n)
    out.set(part, n)
    n += part.length
  }
  // Filled up with letters when the units ran out.
  return out.fill(0x61, n)
}

/** Lengths at and around the block edges, the two-block edges and the tail's. */
const EDGES = [0, 1, 2, 3, 15, 16, 17, 18, 31, 32, 33, 34, 47, 48, 49, 63, 64, 65, 95, 96, 97, 127, 128, 129, 255, 256, 257]
const lengths = fc.oneof(fc.constantFrom(...EDGES), fc.integer({ min: 0, max: 300 }))
const bodies = fc.tuple(fc.array(fc.constantFrom(...UNITS), { maxLength: 300 }), lengths).map(([units, length]) => bodyOf(units, length))

const same = (a: Uint8Array | undefined, b: Uint8Array | undefined) =>
  a === undefined || b === undefined ? a === b : Buffer.from(a).equals(Buffer.from(b))
const show = (a: Uint8Array | undefined) => (a === undefined ? 'undefined' : Buffer.from(a).toString('hex'))

/** Both passes with this bound, compared; the WebAssembly text is read before the next call. */
function agree(body: Uint8Array, maxEscapes: number): void {
  const want = gsonText(body, maxEscapes)
  const got = gson(body, maxEscapes)
  if (!same(got, want)) expect.fail(`max ${maxEscapes}, body ${show(body)}\n got ${show(got)}\nwant ${show(want)}`)
}

describe('the WebAssembly Gson pass', () => {
  it('is there, beside the stripper, in the one module', () => {
    expect(kernels).toBeDefined()
    const names = WebAssembly.Module.exports(new WebAssembly.Module(Buffer.from(STRIP_WASM_BASE64, 'base64'))).map((e) => e.name)
    expect(names).toEqual(expect.arrayContaining(['memory', 'input', 'strip', 'gson']))
  })

  it('agrees with the portable pass on random bodies, with the bound at, below and above their escapes', () => {
    fc.assert(
      fc.property(bodies, fc.integer({ min: 0, max: 3 }), (body, extra) => {
        const escapes = escapesIn(body)
        for (const max of [escapes - 1, escapes, escapes + extra, maxGsonEscapes(body)]) if (max >= 0) agree(body, max)
      }),
      { numRuns: 2000 },
    )
  })

  it('agrees at exactly a fifth of the body escaped, and one more, at every length to 200', () => {
    for (let length = 5; length <= 200; length++) {
      const limit = Math.floor(length / 5)
      for (const escapes of [limit, limit + 1]) {
        for (const unit of UNITS.slice(0, 7)) {
          // The escapes spread over the body, the rest letters and whitespace.
          const body = new Uint8Array(length).fill(0x61)
          for (let i = 1; i < length; i += 3) body[i] = 0x20
          const step = Math.max(1, Math.floor(length / escapes))
          for (let k = 0, at = 0; k < escapes && at + unit.length <= length; k++, at += Math.max(step, unit.length)) {
            body.set(unit, at)
          }
          agree(body, limit)
          // Through the candidate's own bounds, as the verifier asks.
          const made = mayHaveGsonForm(body) ? gson(body, maxGsonEscapes(body)) : undefined
          expect(show(made), `length ${length}`).toBe(show(gsonCandidate(body)))
        }
      }
    }
  })

  it('agrees wherever a U+2028 falls across a block’s end, before a clean block, an escaped one or the last bytes', () => {
    // The kernel matches U+2028 in a block with the two bytes after it, and drops the bytes that
    // spill into the next block, whichever way that block is made.
    for (const separator of [bytes(0xe2, 0x80, 0xa8), bytes(0xe2, 0x80, 0xa9)]) {
      for (const next of [utf8('abcdefghijklmnopqrstuvwxyz'), utf8('a <b> c = d & e ; f'), utf8(' \t\n x y')]) {
        for (let at = 0; at < 40; at++) {
          for (const length of [at + 3, at + 4, at + 18, at + 19, 48, 64]) {
            if (length < at + 3) continue
            const body = new Uint8Array(length).fill(0x61)
            body[1] = 0x3c
            body.set(separator, at)
            body.set(next.subarray(0, Math.max(0, length - at - 3)), at + 3)
            agree(body, maxGsonEscapes(body))
            agree(body, escapesIn(body))
          }
        }
      }
    }
  })

  it('agrees on 64 KiB bodies: the hostile every-fifth-byte one, its neighbour with one escape more, and a pretty one', () => {
    const size = MAX_GSON_FALLBACK_BODY
    const fifth = new Uint8Array(size).fill(0x61)
    const escaped = [0x3c, 0x3e, 0x26, 0x3d, 0x27]
    for (let i = 4, k = 0; i < size; i += 5, k++) fifth[i] = escaped[k % 5] as number
    agree(fifth, maxGsonEscapes(fifth))
    const over = fifth.slice()
    over[0] = 0x3c
    agree(over, maxGsonEscapes(over))
    expect(gson(over, maxGsonEscapes(over))).toBeUndefined()
    const pretty = utf8(`{\n  "html": "<b>\u2028x & y</b>",\n  "pad": "${'abc \u4e2d\u2027 '.repeat(size / 16)}"\n}`).subarray(0, size)
    agree(pretty, maxGsonEscapes(pretty))
  })

  it('never reads a previous call’s bytes past the body’s end', () => {
    // 80 A8 left in memory right behind a body that ends in E2: not a U+2028.
    const long = bodyOf([utf8('<a>'), ...Array(40).fill(utf8('x\u2028'))], 123)
    for (let end = 1; end < long.length; end++) {
      gson(long, long.length)
      agree(long.subarray(0, end), end)
    }
    // A longer text first, then shorter ones, alternating with the stripper on the same memory.
    for (const size of [5000, 17, 16, 15, 1, 0, 33, 4000, 3]) {
      const body = bodyOf([utf8(' <é\u2028 '), ...Array(size).fill(utf8('a \u2029'))], size)
      kernels?.strip(new Uint8Array(size + 64).fill(0x3c))
      agree(body, maxGsonEscapes(body))
    }
  })
})

describe("the Node backend's gsonHmacSync", () => {
  const gsonHmacSync = backend.gsonHmacSync as NonNullable<typeof backend.gsonHmacSync>

  it('hashes the portable pass’s text, with each key', async () => {
    const keys = await Promise.all(['whsec-one', 'whsec-two'].map((secret) => backend.importHmacKey(utf8(secret))))
    for (const size of [10, 1000, 16 * 1024, 40_000, MAX_GSON_FALLBACK_BODY]) {
      const body = bodyOf(Array(size).fill(utf8('{"a": "x<y",\t"bb": 12345}\n')), size)
      const text = gsonText(body, maxGsonEscapes(body)) as Uint8Array
      expect(text).toBeDefined()
      const made = gsonHmacSync(keys, body, maxGsonEscapes(body))
      expect(show(made?.text)).toBe(show(text))
      expect(made?.digests).toEqual(await backend.hmac(keys, text))
    }
    expect(gsonHmacSync(keys, utf8('{ "plain": 1 }'), 2)).toBeUndefined()
    expect(gsonHmacSync(keys, utf8('<<<'), 2)).toBeUndefined()
  })

  it('makes the text with the portable pass where WebAssembly is unavailable (node --jitless)', async () => {
    vi.resetModules()
    vi.stubGlobal('WebAssembly', undefined)
    try {
      // A fresh copy of the backend, which compiles its kernels on first use, here without WebAssembly.
      const { backend: fresh } = await import('../src/crypto/node.ts')
      const key = await fresh.importHmacKey(utf8('whsec-demo'))
      const body = utf8(`{ "html": "<b>x</b> \u2028 & 'y'", "pad": "${'z'.repeat(100)}" }`)
      const made = fresh.gsonHmacSync?.([key], body, maxGsonEscapes(body))
      const text = gsonCandidate(body) as Uint8Array
      expect(show(made?.text)).toBe(show(text))
      expect(made?.digests).toEqual(await backend.hmac([key], text))
    } finally {
      vi.unstubAllGlobals()
    }
  })
})

describe('matchSignature on the Gson form', () => {
  it('hands out a text of its own, which later verifications leave as it is', async () => {
    const body = `{ "label": "<b>Buy</b> & save" }`
    const text = gsonCandidate(utf8(body)) as Uint8Array
    const match = await matchSignature(body, await sign(new TextDecoder().decode(text), 'whsec-demo'), 'whsec-demo')
    expect(match?.form).toBe('gson')
    const kept = (match as { text: Uint8Array }).text
    expect(show(kept)).toBe(show(text))
    // Other bodies through both kernels, which reuse the memory a text could have been a view of.
    await matchSignature(`{ "other": "${'<x> '.repeat(500)}" }`, 'ab'.repeat(32), 'whsec-demo')
    expect(show(kept)).toBe(show(text))
  })
})
