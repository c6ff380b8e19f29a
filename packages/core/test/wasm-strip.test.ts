/**
 * The WebAssembly stripper against a plain reference, with its module from either source (compiled
 * from bytes, as on Node, Bun, Deno and browsers; imported as a `.wasm` module, as the edge build
 * on Workers and Vercel's edge): edge cases, every small pattern at every alignment, random
 * bodies, and call sequences meant to leak a previous call's bytes. Then both backends' canonical
 * HMAC over it, the Web one with Web Crypto reading the kernel's memory.
 */

import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { makePayload, random } from '@hookguard/testkit/payload'
import { describe, expect, it, vi } from 'vitest'
import { backend as active } from '#crypto'
import { compileStripWat } from '../../../scripts/build-wasm.ts'
import { whitespaceStripper } from '../src/adapter.ts'
import { stripUnicodeWhitespace } from '../src/canonical.ts'
import { backend as node } from '../src/crypto/node.ts'
import { stripModule as fromImport, importedModule } from '../src/crypto/strip-module.edge.ts'
import { stripModule as fromBytes } from '../src/crypto/strip-module.ts'
import { STRIP_WASM_BASE64 } from '../src/crypto/strip-wasm-bytes.ts'
import type { CryptoBackend } from '../src/crypto/types.ts'
import {
  createStripper,
  createWasmKernels,
  type StripModuleSource,
  type StripReport,
  type TransientStrip,
  WASM_STRIP_MAX,
} from '../src/crypto/wasm-strip.ts'
import { backend as web } from '../src/crypto/web.ts'
import { indexOfJavaWhitespace, stripJavaWhitespace, whitespaceJoinsCharacter } from '../src/strip.ts'

const WHITESPACE = [0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d]
const IS_WHITESPACE = Uint8Array.from({ length: 256 }, (_, b) => (WHITESPACE.includes(b) ? 1 : 0))
/** The plain reference, a loop over a table: the sweeps below run it over tens of megabytes. */
function reference(body: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(body.length)
  let n = 0
  for (let i = 0; i < body.length; i++) {
    const b = body[i] as number
    if (IS_WHITESPACE[b] === 0) out[n++] = b
  }
  return out.slice(0, n)
}
/** Every byte that stays, including 0x00, 0x08, 0x0E, 0x1F, 0x21 and the UTF-8 range. */
const KEPT = Array.from({ length: 256 }, (_, b) => b).filter((b) => !WHITESPACE.includes(b))

// Deterministic, so a failure reproduces.
const next = random(20260101)
const pick = (list: readonly number[]) => list[Math.floor(next() * list.length)] as number

/**
 * A body of `length` bytes, each whitespace with probability `density`, each byte random in its
 * class: one draw decides both, the class by where it falls and the byte by where in the class.
 */
function body(length: number, density: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(length)
  for (let i = 0; i < length; i++) {
    const r = next()
    out[i] =
      r < density
        ? (WHITESPACE[Math.floor((r / density) * WHITESPACE.length)] as number)
        : (KEPT[Math.floor(((r - density) / (1 - density)) * KEPT.length)] as number)
  }
  return out
}

/**
 * A compact body of `length` bytes: no whitespace, every byte above 0x20 (as JSON's are: it
 * forbids raw control characters in strings), or, with `low`, holding bytes below 0x21 that are
 * not whitespace (0x00, 0x08, 0x0E, 0x1F) too.
 */
function compact(length: number, low = false): Uint8Array<ArrayBuffer> {
  const high = KEPT.filter((b) => b > 0x20)
  const out = new Uint8Array(length)
  for (let i = 0; i < length; i++) out[i] = low && next() < 0.05 ? pick([0x00, 0x08, 0x0e, 0x1f]) : pick(high)
  return out
}

/** Bit i of `pattern` set: byte i is whitespace. */
function fromPattern(pattern: number, length: number, offset = 0): Uint8Array {
  // Placed at `offset` inside a larger buffer, so the body's own alignment varies too.
  const out = new Uint8Array(offset + length).subarray(offset)
  for (let i = 0; i < length; i++) out[i] = (pattern >>> i) & 1 ? pick(WHITESPACE) : pick(KEPT)
  return out
}

/** The plain reference for what a strip reports: some whitespace byte right before a continuation byte. */
const joinsReference = (input: Uint8Array) =>
  input.some((b, i) => i > 0 && (b & 0xc0) === 0x80 && IS_WHITESPACE[input[i - 1] as number] === 1)

/**
 * Holds a stripper's {@link StripReport} to the reference: random bodies rich in whitespace and
 * continuation bytes, the same with every joint taken away (and whitespace at the very end, before
 * the memory past the body), then one joint at every position of a short body or near the ends
 * and the 32-byte steps of a long one.
 */
function checkJoins(told: (input: Uint8Array) => boolean): void {
  const other = KEPT.filter((b) => (b & 0xc0) !== 0x80)
  const mixed = (length: number) =>
    Uint8Array.from({ length }, () => {
      const r = next()
      return r < 0.2 ? pick(WHITESPACE) : r < 0.3 ? 0x80 + Math.floor(next() * 0x40) : pick(other)
    })
  for (const length of [...Array.from({ length: 131 }, (_, n) => n), 1023, 1024, 16_385, 65_553]) {
    const input = mixed(length)
    expect(told(input), `length ${length}`).toBe(joinsReference(input))
    const clean = input.map((b, i) => (i > 0 && (b & 0xc0) === 0x80 && IS_WHITESPACE[input[i - 1] as number] === 1 ? 0x41 : b))
    if (length > 0) clean[length - 1] = 0x20
    expect(told(clean), `length ${length}, no joint`).toBe(false)
    const near = [0, 1, 14, 15, 16, 30, 31, 32, length - 34, length - 33, length - 32, length - 18, length - 17, length - 16, length - 2]
    const positions = length <= 130 ? Array.from({ length: Math.max(length - 1, 0) }, (_, at) => at) : near
    for (const at of positions) {
      const joint = clean.slice()
      joint[at] = pick(WHITESPACE)
      joint[at + 1] = 0x80 + Math.floor(next() * 0x40)
      expect(told(joint), `length ${length}, joint at ${at}`).toBe(true)
    }
  }
}

/** The search a build hands the stripper for where there is no kernel. */
const search = (bytes: Uint8Array) => indexOfJavaWhitespace(bytes) !== -1

/** Compares by value, with a readable message; expect().toEqual on 1 MiB arrays is very slow. */
function check(strip: (body: Uint8Array) => Uint8Array, input: Uint8Array): void {
  const want = reference(input)
  const got = strip(input)
  if (Buffer.compare(got, want) !== 0) {
    const show = (a: Uint8Array) => Buffer.from(a.subarray(0, 80)).toString('hex')
    expect.fail(`length ${input.length}: in ${show(input)}\n got ${show(got)} (${got.length})\nwant ${show(want)} (${want.length})`)
  }
}

/**
 * The property checks below are CPU work of about a second each on an idle machine, several times
 * that on a busy two-core one: their timeout only keeps a hang from going unnoticed.
 */
const CPU_WORK_TIMEOUT_MS = 60_000

/**
 * The core runs this file on both builds, but the kernel's bytes and the code around them are the
 * same on each: the random sweeps run in full on the Node build and at a quarter of their count on
 * the Web one, where they only confirm it. The exhaustive cases run in full on both.
 */
const RANDOM_DRAWS = process.env.EXPECTED_CRYPTO === 'web' ? 0.25 : 1
const draws = (count: number) => Math.ceil(count * RANDOM_DRAWS)

/** The benchmark's payloads, made once for both module sources: making them costs more than stripping them. */
let benchmarkPayloads: Uint8Array[] | undefined
const payloads = () =>
  (benchmarkPayloads ??= (['pretty', 'gson', 'compact'] as const).flatMap((shape) =>
    [1024, 65536, 1048576].map((size) => makePayload(shape, size, '').bytes),
  ))

const SOURCES: [string, StripModuleSource][] = [
  ['compiled from bytes', fromBytes],
  ['imported as a .wasm module', fromImport],
]

describe.each(SOURCES)(
  'the WebAssembly stripper, %s',
  (_, source) => {
    const strip = createWasmKernels(source.load)?.strip as (body: Uint8Array) => Uint8Array

    it('is made', () => {
      expect(strip).toBeTypeOf('function')
    })

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
          for (let n = 0; n < draws(40); n++) {
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
        // Above 600 bytes one length in 37, or in 149 on the Web build: odd steps, so every alignment comes round.
        const step = RANDOM_DRAWS === 1 ? 37 : 149
        for (let length = 0; length <= 5000; length += length < 600 ? 1 : step) {
          check(strip, body(length, density))
        }
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
      for (let n = 0; n < draws(300); n++) {
        const size = Math.floor(next() ** 3 * 150000)
        check(strip, body(size, pick([0, 1, 30, 100]) / 100))
      }
    })

    it('tells whether a whitespace byte it took out stood right before a continuation byte, as a plain reference does, whatever the memory held past the body', () => {
      const kernels = createWasmKernels(source.load) as { strip: TransientStrip; hasWhitespace: (bytes: Uint8Array) => boolean }
      const report: StripReport = { joins: undefined }
      checkJoins((input) => {
        // Whitespace before continuation bytes left in the memory past the body, where the last
        // partial blocks read: the search copies its bytes in as they are.
        kernels.hasWhitespace(Uint8Array.from({ length: input.length + 64 }, (_, i) => (i % 2 === 0 ? 0x20 : 0xb8)))
        report.joins = !joinsReference(input)
        kernels.strip(input.slice(), report)
        return report.joins as boolean
      })
    })

    it('agrees with the JavaScript stripper on the benchmark payloads', () => {
      for (const bytes of payloads()) expect(Buffer.from(strip(bytes)).equals(stripJavaWhitespace(bytes))).toBe(true)
    })

    it('tells whether bytes hold whitespace: each of the six at every position, none in compact bytes, whatever the memory held before', () => {
      const hasWhitespace = createWasmKernels(source.load)?.hasWhitespace as (bytes: Uint8Array) => boolean
      // Short lengths at every position and alignment; then lengths around the kernel's blocks of
      // 16 and its passes of 64, and around 16 KiB and 64 KiB, at their edges and in their last
      // partial block.
      const positions = (length: number) =>
        length <= 300
          ? Array.from({ length }, (_, i) => i)
          : [0, 1, 15, 16, 63, 64, length >> 1, length - 65, length - 64, length - 17, length - 16, length - 15, length - 2, length - 1]
      const lengths = [
        ...Array.from({ length: 301 }, (_, i) => i),
        ...[1024, 16384, 65536].flatMap((edge) => [
          edge - 64,
          edge - 17,
          edge - 16,
          edge - 1,
          edge,
          edge + 1,
          edge + 15,
          edge + 16,
          edge + 63,
        ]),
      ]
      // Misses are gathered and asserted once: an expect() per call was most of this test's time.
      const missed: string[] = []
      for (const length of lengths) {
        for (const low of [false, true]) {
          const clean = compact(length, low)
          // Stale whitespace past the end from a longer call before: never counted.
          hasWhitespace(new Uint8Array(length + 100).fill(0x20))
          if (hasWhitespace(clean)) missed.push(`clean, length ${length}, low bytes ${low}: found whitespace`)
          for (const [n, at] of positions(length).entries()) {
            const input = clean.slice()
            input[at] = WHITESPACE[n % WHITESPACE.length] as number
            if (!hasWhitespace(input)) missed.push(`length ${length}, ${input[at]} at ${at}: not found`)
          }
        }
      }
      expect(missed).toEqual([])
      // Every byte value alone in a clean block: only the six count.
      for (let b = 0; b < 256; b++) {
        for (const length of [1, 16, 64, 65, 200]) {
          const input = compact(length)
          input[length - 1] = b
          expect(hasWhitespace(input), `byte ${b}, length ${length}`).toBe(WHITESPACE.includes(b))
        }
      }
    })

    it('strips its own previous result, a view of its memory', () => {
      const input = body(3000, 0.3)
      const once = strip(input)
      const want = reference(once.slice())
      expect(Buffer.from(strip(once)).equals(want)).toBe(true)
    })

    it('removes Unicode whitespace as canonical.ts does, on bodies that mix every kind of byte at random, between calls of the other kernels', () => {
      const kernels = createWasmKernels(source.load) as NonNullable<ReturnType<typeof createWasmKernels>>
      // Every byte that begins a whitespace character, every byte that continues one, a few
      // others, and the neighbours of each (E2 81 A0 is no whitespace, E2 81 9F is).
      const bytes = [0x09, 0x0a, 0x0d, 0x20, 0x1b, 0x1c, 0x1f, 0x61, 0x3e, 0xc2, 0x85, 0xa0, 0xe1, 0x9a, 0xe2, 0x80, 0x81, 0x8a, 0x8b]
      bytes.push(0xa8, 0xa9, 0xaf, 0x9f, 0xe3, 0xef, 0xbb, 0xbf, 0xbe)
      const mixed = (length: number) => Uint8Array.from({ length }, () => pick(bytes))
      const same = (input: Uint8Array) => {
        const want = stripUnicodeWhitespace(input)
        const got = kernels.unicode(input)
        expect(got === undefined ? undefined : Buffer.from(got).toString('hex'), Buffer.from(input).toString('hex')).toBe(
          want === undefined ? undefined : Buffer.from(want).toString('hex'),
        )
      }
      for (let length = 0; length <= 300; length++) for (let n = 0; n < draws(20); n++) same(mixed(length))
      for (let n = 0; n < draws(40); n++) {
        // The other kernels write the same memory: the tables and the next body must not mind.
        kernels.strip(body(20000, 0.3))
        kernels.gson(mixed(3000), 100)
        same(mixed(Math.floor(next() * 20000)))
      }
      same(new TextEncoder().encode('"李\u3000雷 x\u00A0y\u2028z\uFEFF\u0085\u1680\u205F\u001c"'))
    })

    it('removes Unicode whitespace as canonical.ts does after every pair of bytes, each followed by every byte that could end a character, at every lane of a block', () => {
      // The kernel spells the set out in its comparisons; canonical.ts's tables define it. Every
      // pair is tried with the bytes a third-byte comparison could match (and their neighbours),
      // and every pair of a lead byte and a continuation byte with all 256: a comparison that
      // reads a wrong byte, or a range that is too wide, shows as a difference from the tables.
      const kernels = createWasmKernels(source.load) as NonNullable<ReturnType<typeof createWasmKernels>>
      const thirds = [
        0x20, 0x61, 0x7f, 0x80, 0x81, 0x8a, 0x8b, 0x9e, 0x9f, 0xa0, 0xa7, 0xa8, 0xa9, 0xaa, 0xae, 0xaf, 0xb0, 0xbe, 0xbf, 0xc0,
      ]
      const every = Array.from({ length: 256 }, (_, b) => b)
      // Five bytes a record: the pair, the third, then `aa`, so that the records' first bytes
      // go through all 16 lanes in turn, and each record ends what it began.
      const RECORD = 5
      const records: number[] = []
      for (let b0 = 0; b0 < 256; b0++)
        for (let b1 = 0; b1 < 256; b1++)
          for (const b2 of b0 >= 0xc0 && b1 >= 0x80 && b1 < 0xc0 ? every : thirds) records.push((b0 << 16) | (b1 << 8) | b2)
      const PER_CALL = 200_000
      for (let from = 0; from < records.length; from += PER_CALL) {
        const part = records.slice(from, from + PER_CALL)
        const input = new Uint8Array(part.length * RECORD).fill(0x61)
        for (const [i, record] of part.entries()) input.set([record >>> 16, (record >>> 8) & 0xff, record & 0xff], i * RECORD)
        const want = stripUnicodeWhitespace(input) ?? input.filter((b) => IS_WHITESPACE[b] === 0)
        const got = kernels.unicode(input) ?? input.filter((b) => IS_WHITESPACE[b] === 0)
        if (Buffer.compare(got, want) === 0) continue
        // The first record where they part: each record alone.
        const wrong = part.find((record) => {
          const one = Uint8Array.of(0x61, record >>> 16, (record >>> 8) & 0xff, record & 0xff, 0x61)
          const hex = (text: Uint8Array | undefined) => (text === undefined ? '' : Buffer.from(text).toString('hex'))
          return hex(kernels.unicode(one)) !== hex(stripUnicodeWhitespace(one))
        })
        expect.fail(`the kernel and canonical.ts differ at ${wrong?.toString(16).padStart(6, '0') ?? 'a record next to another'}`)
      }
    })
  },
  CPU_WORK_TIMEOUT_MS,
)

const BACKENDS: [string, CryptoBackend][] = [
  ['Node', node],
  ['Web', web],
]

describe.each(BACKENDS)(
  "the %s backend's canonicalHmac and canonicalSha256",
  (_, backend) => {
    const secrets = ['whsec-demo', 'second', 'a third, longer than one block of SHA-256 for good measure']
    const keys = () => Promise.all(secrets.map((secret) => backend.importHmacKey(new TextEncoder().encode(secret))))

    it('strip with the WebAssembly kernel compiled from bytes', () => {
      expect(backend.stripper()).toBe('wasm-bytes')
    })

    it('hash what the portable stripper leaves, on either side of the WebAssembly size limit', async () => {
      const all = await keys()
      for (const length of [WASM_STRIP_MAX - 1, WASM_STRIP_MAX, WASM_STRIP_MAX + 1]) {
        const input = body(length, 0.2)
        expect(await backend.canonicalHmac(all, input)).toEqual(await backend.hmac(all, stripJavaWhitespace(input)))
        expect(await backend.canonicalSha256(input)).toEqual(await backend.sha256(stripJavaWhitespace(input)))
      }
    })

    it('strip a body over the WebAssembly size limit a part at a time, whitespace at the parts’ edges included', async () => {
      const all = await keys()
      for (const length of [WASM_STRIP_MAX + 1, 2 * WASM_STRIP_MAX + 5]) {
        for (const density of [0, 0.5, 1]) {
          const input = body(length, density)
          for (const at of [WASM_STRIP_MAX - 1, WASM_STRIP_MAX, WASM_STRIP_MAX + 1, length - 1]) input[at] = 0x20
          const want = reference(input)
          expect(await backend.canonicalSha256(input), `${length} ${density}`).toEqual(await backend.sha256(want))
          expect(await backend.canonicalHmac(all, input)).toEqual(await backend.hmac(all, want))
        }
      }
    })

    it('hash what the reference leaves for random bodies of every density, each key, one after another', async () => {
      const all = await keys()
      for (let length = 0; length <= 3000; length += length < 200 ? 1 : 53) {
        const input = body(length, [0, 0.01, 0.3, 1][length % 4] as number)
        expect(await backend.canonicalHmac(all, input), `length ${length}`).toEqual(await backend.hmac(all, reference(input)))
      }
    })

    it('hash a compact body exactly, and strip one with a single whitespace byte anywhere: first, last, at a chunk’s edges, in the last partial block', async () => {
      const all = await keys()
      const reference = (text: Uint8Array) => secrets.map((secret) => new Uint8Array(createHmac('sha256', secret).update(text).digest()))
      // Around the one-shot size (16 KiB), the first KiB searched alone, the chunks searched (16
      // and 64 KiB), SIMD blocks (16 bytes) and passes (64 bytes), up to two chunks and a partial one.
      const lengths = [16383, 16384, 16385, 16401, 32768, 65535, 65536, 65537, 65551, 65599, 131072, 131073, 131136, 147473]
      for (const length of lengths) {
        const clean = compact(length, length % 2 === 1)
        expect(await backend.canonicalHmac(all, clean), `clean, length ${length}`).toEqual(reference(clean))
        const edges = [16383, 16384, 65535, 65536, 131071, 131072].filter((at) => at < length)
        const ends = [length - 64, length - 17, length - 16, length - 15, length - 2, length - 1]
        for (const [n, at] of [0, 1, 15, 16, 1023, 1024, ...edges, ...ends].entries()) {
          const input = clean.slice()
          input[at] = WHITESPACE[n % WHITESPACE.length] as number
          const stripped = new Uint8Array(length - 1)
          stripped.set(input.subarray(0, at))
          stripped.set(input.subarray(at + 1), at)
          expect(await backend.canonicalHmac(all, input), `length ${length}, ${input[at]} at ${at}`).toEqual(reference(stripped))
        }
      }
    })

    it('give each of many concurrent calls its own body, though the kernel reuses its memory', async () => {
      const all = await keys()
      // Started together, shorter and longer bodies interleaved, so that each strip overwrites the last one's text.
      const inputs = Array.from({ length: draws(200) }, (_, i) => body(i % 2 === 0 ? 100 + i * 37 : 70_000 - i * 101, 0.25))
      const got = await Promise.all(inputs.map((input) => backend.canonicalHmac(all, input)))
      const sha = await Promise.all(inputs.map((input) => backend.canonicalSha256(input)))
      for (const [i, input] of inputs.entries()) {
        const want = reference(input)
        expect(got[i], `body ${i}`).toEqual(await backend.hmac(all, want))
        expect(sha[i], `body ${i}`).toEqual(await backend.sha256(want))
      }
    })
  },
  CPU_WORK_TIMEOUT_MS,
)

describe('Web Crypto on this Node', () => {
  it('copies what sign and digest are given when they are called, so the kernel may overwrite its memory right after', async () => {
    const key = await crypto.subtle.importKey('raw', new TextEncoder().encode('k'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
    for (const size of [1, 1000, 70_000, 1024 * 1024]) {
      const memory = new WebAssembly.Memory({ initial: Math.ceil((size + 1) / 65536) })
      const view = new Uint8Array(memory.buffer, 1, size)
      const original = body(size, 0.3)
      view.set(original)
      const signed = crypto.subtle.sign('HMAC', key, view)
      const digested = crypto.subtle.digest('SHA-256', view)
      view.fill(0x78)
      expect(new Uint8Array(await signed)).toEqual(new Uint8Array(await crypto.subtle.sign('HMAC', key, original)))
      expect(new Uint8Array(await digested)).toEqual(new Uint8Array(await crypto.subtle.digest('SHA-256', original)))
    }
  })
})

describe('whitespaceStripper', () => {
  it('names the build’s stripper: the kernel compiled from bytes, on Node and on the Web build alike', () => {
    expect(whitespaceStripper()).toBe(active.stripper())
    expect(whitespaceStripper()).toBe('wasm-bytes')
  })
})

describe('without WebAssembly (node --jitless)', () => {
  it('createWasmKernels returns undefined and the stripper is the portable JavaScript, from either source', () => {
    vi.stubGlobal('WebAssembly', undefined)
    try {
      for (const [, source] of SOURCES) {
        expect(createWasmKernels(source.load)).toBeUndefined()
        const searched: number[] = []
        const stripper = createStripper(source, (bytes) => {
          searched.push(bytes.length)
          return search(bytes)
        })
        expect(stripper.kind()).toBe('js')
        const input = body(5000, 0.3)
        expect(stripper.strip(input)).toEqual(reference(input))
        // The build's own search tells whether there is whitespace at all.
        expect([stripper.hasWhitespace(input), stripper.hasWhitespace(compact(5000))]).toEqual([true, false])
        expect(searched).toEqual([5000, 5000])
        // The portable stripper leaves the question to be asked, whole or in parts, and the
        // portable answer is the kernel's.
        const report: StripReport = { joins: false }
        for (const input of [body(1000, 0.3), body(WASM_STRIP_MAX + 100, 0.3)]) {
          stripper.strip(input, report)
          expect(report.joins).toBeUndefined()
        }
        checkJoins((input) => whitespaceJoinsCharacter(input, 0, input.length))
      }
    } finally {
      vi.unstubAllGlobals()
    }
  })
})

describe('a body over the kernel’s bound, stripped a part at a time', () => {
  it('reports a whitespace byte before a continuation byte in any part, and across the edge between two', () => {
    const stripper = createStripper(fromBytes, search)
    const report = { joins: false }
    const clean = body(2 * WASM_STRIP_MAX + 100, 0.2).map((b) => ((b & 0xc0) === 0x80 ? 0x41 : b))
    for (const at of [-1, 5, WASM_STRIP_MAX - 2, WASM_STRIP_MAX - 1, WASM_STRIP_MAX, 2 * WASM_STRIP_MAX - 1, 2 * WASM_STRIP_MAX + 98]) {
      const input = clean.slice()
      if (at >= 0) [input[at], input[at + 1]] = [0x20, 0xb8]
      report.joins = at < 0
      stripper.strip(input, report)
      expect(report.joins, `joint at ${at}`).toBe(at >= 0)
    }
  }, 30_000)
})

describe('the stripper’s whitespace search', () => {
  it('is the kernel’s up to the kernel’s bound, and the build’s own search above it', () => {
    const searched: number[] = []
    const stripper = createStripper(fromBytes, (bytes) => {
      searched.push(bytes.length)
      return search(bytes)
    })
    const clean = compact(WASM_STRIP_MAX + 1)
    expect(stripper.hasWhitespace(clean.subarray(0, WASM_STRIP_MAX))).toBe(false)
    expect(searched).toEqual([])
    expect(stripper.hasWhitespace(clean)).toBe(false)
    clean[WASM_STRIP_MAX] = 0x0c
    expect(stripper.hasWhitespace(clean)).toBe(true)
    expect(searched).toEqual([WASM_STRIP_MAX + 1, WASM_STRIP_MAX + 1])
  })
})

describe('the edge build’s module source', () => {
  it('compiles bytes, where a bundler inlined the file (esbuild’s binary loader) and the runtime allows it', () => {
    const bytes = readFileSync(new URL('../src/crypto/strip.wasm', import.meta.url))
    const strip = createWasmKernels(importedModule(new Uint8Array(bytes)).load)?.strip as (body: Uint8Array) => Uint8Array
    const input = body(3000, 0.3)
    expect(strip(input)).toEqual(reference(input))
  })

  it('leaves the portable JavaScript where the bundler handed over anything else (a file name), rather than failing', () => {
    for (const compiled of ['./strip-3F2A.wasm', undefined, {}]) {
      const stripper = createStripper(importedModule(compiled), search)
      expect(stripper.kind()).toBe('js')
      const input = body(3000, 0.3)
      expect(stripper.strip(input)).toEqual(reference(input))
    }
  })

  it('takes a module of another realm, which instanceof would not recognise (Next.js’s local edge sandbox)', async () => {
    const { runInNewContext } = await import('node:vm')
    const bytes = readFileSync(new URL('../src/crypto/strip.wasm', import.meta.url))
    const foreign = runInNewContext('new WebAssembly.Module(bytes)', { bytes: new Uint8Array(bytes) }) as WebAssembly.Module
    expect(foreign instanceof WebAssembly.Module).toBe(false)
    expect(createStripper(importedModule(foreign), search).kind()).toBe('wasm-import')
  })
})

describe('the committed kernel', () => {
  it('strip-wasm-bytes.ts and strip.wasm hold what strip.wat compiles to (pnpm build:wasm)', async () => {
    const compiled = Buffer.from(await compileStripWat())
    expect(Buffer.from(STRIP_WASM_BASE64, 'base64').equals(compiled)).toBe(true)
    expect(readFileSync(new URL('../src/crypto/strip.wasm', import.meta.url)).equals(compiled)).toBe(true)
  })
})
