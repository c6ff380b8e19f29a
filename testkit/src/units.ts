/**
 * Bodies that repeat one unit of one to three bytes, over every byte a scan of the core compares
 * against: what the complexity test (test/robustness/complexity.test.ts, sampled) and the
 * adversarial benchmark (bench/adversarial.ts, every unit) send to every entry point, so that a
 * body made of a scan's own bytes in some order (a body of E2, of `E2 80` pairs, of `access_toke=`
 * parts) is measured before someone else finds it.
 *
 * Portable (no Node APIs, erasable TypeScript only), like hostile.ts.
 */

/**
 * The bytes the core's scans compare against, each with where, read from the code (pinned: a scan
 * that starts comparing against another byte must add it here). Unicode whitespace is represented
 * by the lead and continuation bytes it shares with U+2028; the rest of its bytes (85, E1, 9A,
 * 81-8A, AF, 9F, BB, BF, 1D-1F) are in {@link MIXES}' Unicode group rather than here: the kernel's
 * pass compares every lane with all of them whatever the body holds, and each byte added here
 * grows the benchmark's units by the square of the alphabet. The digits by those of `%5F`.
 */
export const SCANNED_BYTES: readonly { bytes: string; where: string }[] = [
  {
    bytes: ' \t\n\x0B\f\r',
    where: "Java's `\\s`: canonical.ts JAVA_WHITESPACE, strip.ts, strip.wat `strip`, the native searches of crypto/node.ts",
  },
  { bytes: '\x1C', where: 'the ASCII Unicode whitespace of canonical.ts (U+001C–U+001F)' },
  {
    bytes: '\xE2\x80\xA8\xA9\xC2\xA0\xE3\xEF',
    where: 'UTF-8 of U+2028/9 (Gson fallback, canonical.ts and strip.wat `gson`), of U+00A0, U+3000, U+FEFF (Unicode whitespace)',
  },
  { bytes: `<>&='`, where: "Gson's HTML escapes: canonical.ts GSON_HEX, strip.wat, signature.ts GSON_UNESCAPED" },
  { bytes: '\\",:[]{}', where: 'JSON: json.ts (depth, strings, escapes), the form of mode `none`' },
  { bytes: '%+', where: 'form-urlencoded: form.ts (escapes, `+` as a space); `&` and `=` above' },
  { bytes: '.-', where: 'tokens (token.ts, the `.` between payload and MAC; base64url) and Basic credentials' },
  { bytes: 'acesk_ton', where: 'the letters of `access_token`: form.ts matchName' },
  { bytes: '015F', where: 'digits and hex digits: form.ts hexPair (`%5F`), bytes.ts fromHex, numbers in json.ts' },
]

/** Every byte of {@link SCANNED_BYTES}, once each, in order. */
export const ALPHABET: readonly number[] = [...new Set(SCANNED_BYTES.flatMap(({ bytes }) => [...bytes].map((c) => c.charCodeAt(0))))]

/** Whether `unit` is a shorter unit repeated (`aa`, `aaa`): its body is that unit's. */
function isPower(unit: readonly number[]): boolean {
  return unit.length > 1 && unit.every((b) => b === unit[0])
}

/**
 * Whether `unit` is the least of its rotations: `abc`, `bca` and `cab` repeated are the same body
 * shifted by a byte or two, so one of them stands for all three.
 */
function isLeastRotation(unit: readonly number[]): boolean {
  for (let shift = 1; shift < unit.length; shift++) {
    for (let i = 0; i < unit.length; i++) {
      const a = unit[i] as number
      const b = unit[(i + shift) % unit.length] as number
      if (b < a) return false
      if (b > a) break
    }
  }
  return true
}

/**
 * Every unit of one to three bytes over {@link ALPHABET}, one per rotation, none a shorter unit
 * repeated: about a third of the alphabet's length cubed.
 */
export function repeatingUnits(): Uint8Array[] {
  const units: Uint8Array[] = []
  const visit = (prefix: number[]) => {
    if (prefix.length > 0 && !isPower(prefix) && isLeastRotation(prefix)) units.push(Uint8Array.from(prefix))
    if (prefix.length === 3) return
    for (const b of ALPHABET) visit([...prefix, b])
  }
  visit([])
  return units
}

/**
 * A fixed sample of {@link repeatingUnits}: every unit of one byte, the units the findings that
 * led here were made of, and `count` more drawn with a fixed seed. For a test that must stay
 * short; the benchmark measures them all.
 */
export function sampleUnits(count: number, seed = 1): Uint8Array[] {
  const all = repeatingUnits()
  const named = ['\xE2\x80', '\xE2\x80\xA8', '\xE2\x80\xA9', '=&', '%61', '_to', ',', '\\u', '[{', '":'].map((text) =>
    Uint8Array.from(text, (c) => c.charCodeAt(0)),
  )
  const sample = [...all.filter((unit) => unit.length === 1), ...named]
  let state = seed >>> 0 || 1
  for (let i = 0; i < count; i++) {
    // xorshift32: the same sample on every run.
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    sample.push(all[(state >>> 0) % all.length] as Uint8Array)
  }
  return sample
}

/** `unit` repeated to exactly `size` bytes (the last bytes, where a whole unit no longer fits, are its first ones). */
export function unitBody(unit: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(size)
  if (unit.length === 0) return out
  // The unit, then what is filled copied after itself: a few native copies, where a byte at a time
  // cost the suite more than a second of CPU.
  out.set(unit.subarray(0, size))
  for (let filled = unit.length; filled < size; filled *= 2) out.copyWithin(filled, 0, Math.min(filled, size - filled))
  return out
}

/** A unit as printable text: ASCII as it is, other bytes as `\xNN`. */
export function unitLabel(unit: Uint8Array): string {
  return Array.from(unit, (b) => (b > 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`)).join('')
}

/**
 * Groups of scanned bytes whose bodies are drawn at random, a byte at a time ({@link mixedBody}): a
 * pass that branches on each byte's kind mispredicts on them, where a repeated unit's pattern is
 * learnt by the processor within a few periods and never shows it. A pass over the Unicode-
 * whitespace form cost 2 to 4 HMACs of a repeated unit and 6 to 7 of such a mix.
 */
export const MIXES: readonly { name: string; bytes: string }[] = [
  { name: 'Unicode whitespace', bytes: ' \n\x1C\x1Fa\xC2\x85\xA0\xE1\x9A\xE2\x80\x81\x8A\xA8\xA9\xAF\x9F\xE3\xEF\xBB\xBF' },
  { name: 'Gson escapes and U+2028', bytes: `<>&='a\xE2\x80\xA8\x1C ` },
  { name: 'every scanned byte', bytes: String.fromCharCode(...ALPHABET) },
]

/** `size` bytes drawn from `bytes` (latin1 text), the same for the same seed. */
export function mixedBody(bytes: string, size: number, seed = 1): Uint8Array {
  const out = new Uint8Array(size)
  let state = seed >>> 0 || 1
  for (let i = 0; i < size; i++) {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    out[i] = bytes.charCodeAt((state >>> 0) % bytes.length)
  }
  return out
}

/** A body to refuse at any size, with what it is made of as printable text. */
export interface HostileBodies {
  /** The unit's {@link unitLabel}, or `a mix of …`. */
  label: string
  body(size: number): Uint8Array
}

/** `units` repeated, then every {@link MIXES} group drawn at random: what the cost sweeps send. */
export function unitsAndMixes(units: readonly Uint8Array[]): HostileBodies[] {
  return [
    ...units.map((unit) => ({ label: unitLabel(unit), body: (size: number) => unitBody(unit, size) })),
    ...MIXES.map(({ name, bytes }) => ({ label: `a mix of ${name}`, body: (size: number) => mixedBody(bytes, size) })),
  ]
}
