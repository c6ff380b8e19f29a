import { runInNewContext } from 'node:vm'
import { sign, verifySignature } from '@hookguard/core'
import fixtures from '@hookguard/testkit/signatures.json' with { type: 'json' }
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { createReceiver } from '../src/receiver.ts'
import { joinsCharacters, parseSignatureHeader, signatureHint } from '../src/signature.ts'
import { unicodeJsonValue, unicodeString } from './arbitraries.ts'
import { gsonText } from './gson.ts'

const encode = (text: string) => new TextEncoder().encode(text)
const SECRET = 'whsec-demo-7c2e91'

/** HMAC-SHA256 hex over the text exactly as given, by Web Crypto: no canonical form applied. */
async function hmacHex(text: string, secret: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, encode(text)))
  return Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('')
}

/** The signed text of `text`, which holds no whitespace but U+00A0: itself, or without it for the Unicode form. */
function stripForm(text: string, unicode: boolean): Uint8Array {
  return encode(unicode ? text.replaceAll('\u00A0', '') : text)
}

describe('verifySignature', () => {
  describe("with the service's own signatures", () => {
    for (const vector of fixtures.vectors) {
      it(`${vector.valid ? 'accepts' : 'refuses'} ${vector.name} (${vector.why})`, async () => {
        const body = Uint8Array.from(atob(vector.bodyBase64), (c) => c.charCodeAt(0))
        expect(await verifySignature(body, vector.signature, vector.secret, { unicodeWhitespace: vector.unicodeWhitespace })).toBe(
          vector.valid,
        )
      })
    }
  })

  describe('with a signature over the body with every Unicode whitespace removed', () => {
    const vector = fixtures.vectors.find((v) => v.unicodeWhitespace === true)
    if (vector === undefined) throw new Error('the fixtures lost their Unicode-whitespace vector')

    it('refuses it by default: the service never signs that form', async () => {
      expect(await verifySignature(vector.body, vector.signature, vector.secret)).toBe(false)
      expect(await verifySignature(vector.body, vector.signature, vector.secret, { unicodeWhitespace: false })).toBe(false)
    })

    it('accepts it with unicodeWhitespace: true', async () => {
      expect(await verifySignature(vector.body, vector.signature, vector.secret, { unicodeWhitespace: true })).toBe(true)
    })
  })

  describe('with whitespace inserted inside a character of a captured delivery', () => {
    // Stripping bytes out of a body that is not UTF-8 joins what is left: a lenient decoder
    // (`Buffer#toString`, `TextDecoder` without `fatal`) would show the delivery changed.
    const signed = '{"name":"Jean\u00A0Dupont","city":"中山"}'
    const bytes = (...parts: (string | number[])[]) =>
      Uint8Array.from(parts.flatMap((part) => (typeof part === 'string' ? [...encode(part)] : part)))
    // Each: the body, whether the option is on, and whether the text signed is the Unicode form.
    for (const [label, body, unicodeWhitespace, unicodeSigned] of [
      [
        'a space inside 中 (E4 20 B8 AD), for the service form',
        bytes('{"name":"Jean\u00A0Dupont","city":"', [0xe4, 0x20, 0xb8, 0xad], '山"}'),
        false,
        false,
      ],
      [
        'U+3000 inside 中, for the Unicode form',
        bytes('{"name":"Jean\u00A0Dupont","city":"', [0xe4, 0xe3, 0x80, 0x80, 0xb8, 0xad], '山"}'),
        true,
        true,
      ],
      // The service's own text, which keeps U+00A0, made again by removing one from inside another.
      [
        'U+00A0 inside U+00A0 (C2 C2 A0 A0), through the Unicode form',
        bytes('{"name":"Jean', [0xc2, 0xc2, 0xa0, 0xa0], 'Dupont","city":"中山"}'),
        true,
        false,
      ],
    ] as const) {
      it(`refuses ${label}`, async () => {
        const signature = await hmacHex(new TextDecoder().decode(stripForm(signed, unicodeSigned)), SECRET)
        // The text the body strips to is the signed one, byte for byte.
        expect(await verifySignature(encode(signed), signature, SECRET, { unicodeWhitespace })).toBe(true)
        expect(await verifySignature(body, signature, SECRET, { unicodeWhitespace })).toBe(false)
        const refused = await createReceiver({ auth: { mode: 'secret', secret: SECRET, unicodeWhitespace } }).verify({
          method: 'POST',
          url: '/hooks',
          headers: { 'content-type': 'application/json', 'x-service-hmac-signature': signature },
          body,
        })
        // A wrong signature, as verifySignature says, not a signed body that is not JSON.
        expect(refused.ok ? undefined : [refused.response.status, refused.error?.code]).toEqual([401, 'invalid_signature'])
      })
    }

    // Past 16 KiB a body is searched before it is hashed: the space found in its first KiB, or in a later chunk of 16 KiB.
    for (const [where, at] of [
      ['first KiB', 100],
      ['third chunk', 40 * 1024],
    ] as const) {
      it(`refuses a space inside 中 in a body of 64 KiB, in its ${where}`, async () => {
        const pad = (length: number) => 'a'.repeat(length)
        const text = `{"a":"${pad(at)}中${pad(64 * 1024 - at)}"}`
        const body = bytes(`{"a":"${pad(at)}`, [0xe4, 0x20, 0xb8, 0xad], `${pad(64 * 1024 - at)}"}`)
        const signature = await hmacHex(text, SECRET)
        expect(await verifySignature(encode(text), signature, SECRET)).toBe(true)
        expect(await verifySignature(body, signature, SECRET)).toBe(false)
      })
    }

    // The stripper tells the check when a body is all ASCII, from the blocks it reads: the joint
    // must count wherever it falls, in the kernel's 32-byte steps or its last partial blocks, past
    // the one-shot size, and over the kernel's bound, where a body is stripped a part at a time.
    it('refuses a space inside 中 at every position near either end of a body, at every size the stripper takes its own way', async () => {
      const pad = (length: number) => 'a'.repeat(length)
      const cases: [number, number][] = []
      // Every place in the kernel's 32-byte steps, with last partial blocks of many lengths (wasm-strip.test.ts tries every pair).
      for (let before = 0; before <= 40; before++) {
        for (const after of [0, 1, 2, 13, 14, 15, 16, 17, 18, 29, 30, 31, 32, 33]) cases.push([before, after])
      }
      // Past the one-shot size, just within the kernel's bound (the body is 12 bytes more than `size`), and over it.
      for (const [size, nears] of [
        [16 * 1024, [0, 1, 15, 16, 31, 32, 33]],
        [1024 * 1024 - 16, [0, 1, 15, 16, 31, 32, 33]],
        [2 * 1024 * 1024 + 7, [0, 31]],
      ] as const) {
        for (const near of nears) cases.push([near, size - near], [size - near, near])
      }
      // Over 1 MiB a body is stripped a part of 1 MiB at a time: its space last in the first part, or first in the second.
      for (const before of [1024 * 1024 - 9, 1024 * 1024 - 8, 1024 * 1024 - 7]) cases.push([before, 4096])
      // Joined natively: spelling a 2 MiB body out as an array of numbers, as `bytes` does, takes seconds.
      const join = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts))
      for (const [before, after] of cases) {
        const [head, tail] = [encode(`{"a":"${pad(before)}`), encode(`${pad(after)}"}`)]
        const body = join(head, Uint8Array.of(0xe4, 0x20, 0xb8, 0xad), tail)
        const signature = await hmacHex(`{"a":"${pad(before)}中${pad(after)}"}`, SECRET)
        // The same space where it may stand, between two characters: the body strips to the signed text.
        expect(await verifySignature(join(head, encode('中 '), tail), signature, SECRET)).toBe(true)
        if (await verifySignature(body, signature, SECRET)) expect.fail(`verified with ${before} bytes before the joint and ${after} after`)
      }
    }, 60_000)

    it('asks the body itself where the stripper did not look (the JavaScript one), and only then', () => {
      const joined = bytes('{"city":"', [0xe4, 0x20, 0xb8, 0xad], '"}')
      const between = bytes('{"city":"', [0xe4, 0xb8, 0xad, 0x20], '"}')
      const service = { form: 'service' } as const
      expect(joinsCharacters(service, { stripped: true, joins: undefined }, joined)).toBe(true)
      expect(joinsCharacters(service, { stripped: true, joins: undefined }, between)).toBe(false)
      // The stripper's own answer stands, and a body hashed as it came was signed as it is.
      expect(joinsCharacters(service, { stripped: true, joins: false }, joined)).toBe(false)
      expect(joinsCharacters(service, { stripped: false, joins: undefined }, joined)).toBe(false)
      // The compatibility forms take characters of several bytes out: the body must be UTF-8.
      const gson = { form: 'gson', text: between, key: 0 } as const
      expect([
        joinsCharacters(gson, { stripped: true, joins: false }, joined),
        joinsCharacters(gson, { stripped: true, joins: false }, between),
      ]).toEqual([true, false])
    })

    it('accepts a body that is not UTF-8 signed as it is, byte for byte: nothing was taken out of it', async () => {
      const body = bytes('{"city":"', [0xe4, 0xb8], '"}')
      const key = await crypto.subtle.importKey('raw', encode(SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
      const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, body))
      const signature = Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('')
      expect(await verifySignature(body, signature, SECRET)).toBe(true)
    })
  })

  describe('with invisible characters inserted into a captured delivery', () => {
    const original = '{"event":"customer.updated","data":{"id":"cus_1001","name":"Li Lei"}}'
    for (const [label, char] of [
      ['U+00A0', '\u00A0'],
      ['U+3000', '\u3000'],
      ['U+FEFF', '\uFEFF'],
      ['U+2028', '\u2028'],
      ['U+2009', '\u2009'],
      ['U+0085', '\u0085'],
      ['U+001F', '\u001F'],
    ] as const) {
      it(`refuses the edit with ${label} by default`, async () => {
        const signature = await sign(original, SECRET)
        const edited = original.replace('cus_1001', `cus_${char}1001`)
        expect(await verifySignature(edited, signature, SECRET)).toBe(false)
        // The switch exists for senders that strip that way, and it does let this edit through.
        expect(await verifySignature(edited, signature, SECRET, { unicodeWhitespace: true })).toBe(true)
      })
    }
  })

  describe("with a signature over the body's bytes as received, whitespace included", () => {
    // A form the service never signs: only the whitespace-free text is ever signed.
    for (const size of [100, 3000, 70_000, 1_100_000]) {
      for (const at of [0.01, 0.37, 0.5, 0.73, 0.999]) {
        it(`refuses it for a ${size}-byte body with one space at ${at * 100} % of it`, async () => {
          const inner = 'x'.repeat(size)
          const cut = Math.floor(size * at)
          const body = `{"a":"${inner.slice(0, cut)} ${inner.slice(cut)}"}`
          const overRawBytes = await hmacHex(body, SECRET)
          expect(await verifySignature(body, overRawBytes, SECRET)).toBe(false)
          expect(await verifySignature(body, await sign(body, SECRET), SECRET)).toBe(true)
        })
      }
    }

    for (const ws of ['\t', '\n', '\r', '\v', '\f']) {
      it(`refuses it for a 70 000-byte body with one ${JSON.stringify(ws)} between tokens`, async () => {
        const body = `{"a":"${'x'.repeat(35_000)}",${ws}"b":"${'y'.repeat(35_000)}"}`
        expect(await verifySignature(body, await hmacHex(body, SECRET), SECRET)).toBe(false)
      })
    }
  })

  describe('with the signature in upper case', () => {
    it('matches', async () => {
      const body = '{"event":"ping"}'
      expect(await verifySignature(body, (await sign(body, SECRET)).toUpperCase(), SECRET)).toBe(true)
    })
  })

  describe('with several secrets (rotation)', () => {
    it('matches a signature by any of them', async () => {
      const body = '{"event":"ping"}'
      expect(await verifySignature(body, await sign(body, 'new'), ['old', 'new'])).toBe(true)
      expect(await verifySignature(body, await sign(body, 'old'), ['old', 'new'])).toBe(true)
    })

    it('matches a signature by any of three or more, the middle one included', async () => {
      const body = '{"event":"ping"}'
      for (const secret of ['first', 'middle', 'last']) {
        expect(await verifySignature(body, await sign(body, secret), ['first', 'middle', 'last'])).toBe(true)
      }
      expect(await verifySignature(body, await sign(body, 'second'), ['first', 'second', 'third', 'fourth'])).toBe(true)
    })

    it('refuses a signature by a secret that is not among them', async () => {
      const body = '{"event":"ping"}'
      expect(await verifySignature(body, await sign(body, 'retired'), ['old', 'new'])).toBe(false)
    })
  })

  describe('with several comma-separated values in the header', () => {
    it('matches if any value does', async () => {
      const body = '{"event":"ping"}'
      const good = await sign(body, SECRET)
      expect(await verifySignature(body, `${'0'.repeat(64)}, ${good}`, SECRET)).toBe(true)
      expect(await verifySignature(body, `${good},not-hex`, SECRET)).toBe(true)
    })

    it('reads a header of up to 1 KiB, and refuses a longer one unread, whatever it holds', async () => {
      const body = '{"event":"ping"}'
      const good = await sign(body, SECRET)
      const padded = (length: number) => `${','.repeat(length - 65)},${good}`
      expect(await verifySignature(body, padded(1024), SECRET)).toBe(true)
      expect(await verifySignature(body, padded(1025), SECRET)).toBe(false)
      expect(await verifySignature(body, `${good}${' ,'.repeat(8000)}`, SECRET)).toBe(false)
    })

    it('skips a value of 64 characters that are not hex, and matches the next', async () => {
      const body = '{"event":"ping"}'
      expect(await verifySignature(body, `${'z'.repeat(64)}, ${await sign(body, SECRET)}`, SECRET)).toBe(true)
    })
  })

  describe('with a malformed header', () => {
    for (const [label, header] of [
      ['missing', undefined],
      ['empty', ''],
      ['not hex', 'z'.repeat(64)],
      ['of odd length', 'a'.repeat(63)],
      ['a truncated digest', 'a'.repeat(62)],
      ['a prefixed digest', `sha256=${'a'.repeat(64)}`],
    ] as const) {
      it(`resolves false when it is ${label}`, async () => {
        expect(await verifySignature('{}', header, SECRET)).toBe(false)
      })
    }
  })

  describe('when misused', () => {
    it('throws a TypeError naming the package for a secret that is not a string', async () => {
      for (const secret of [[42], ['ok', 42]]) {
        await expect(verifySignature('{}', 'a'.repeat(64), secret as never)).rejects.toThrow(/^@hookguard\/core: /)
      }
      await expect(sign('{}', 42 as never)).rejects.toThrow(TypeError)
    })

    it('throws a TypeError naming the package for an empty secret list', async () => {
      await expect(verifySignature('{}', 'ab', [])).rejects.toThrow(/^@hookguard\/core: /)
    })

    it('throws a TypeError naming the package for secrets that are neither a string nor a list', async () => {
      await expect(verifySignature('{}', 'ab', 42 as unknown as string)).rejects.toThrow(/^@hookguard\/core: /)
    })

    it('throws a TypeError for an empty secret', async () => {
      await expect(verifySignature('{}', 'ab', '')).rejects.toThrow(TypeError)
    })
  })

  describe("with a signature over Gson's escapes of a body sent unescaped", () => {
    const body = (size: number) => `{"label":"<b>Buy</b> & save","pad":"${'x'.repeat(size - 40)}"}`
    const signedAsGson = (text: string) => sign(gsonText(JSON.parse(text)), SECRET)

    it('verifies it for a body up to 64 KiB', async () => {
      const text = body(60_000)
      expect(await verifySignature(text, await signedAsGson(text), SECRET)).toBe(true)
    })

    it('refuses it above 64 KiB: the fallback is bounded by size, and the service never needs it', async () => {
      const text = body(70_000)
      expect(await verifySignature(text, await signedAsGson(text), SECRET)).toBe(false)
    })
  })

  describe('with one space deep inside a large body', () => {
    const spaced = `{"a":"${'x'.repeat(40_000)} ${'y'.repeat(25_000)}"}`
    const compact = spaced.replace(' ', '')

    it('verifies the stripped form', async () => {
      expect(await verifySignature(spaced, await sign(compact, SECRET), SECRET)).toBe(true)
    })

    it('refuses a signature of anything else', async () => {
      expect(await verifySignature(spaced, await sign(compact.replace('y', 'z'), SECRET), SECRET)).toBe(false)
    })
  })

  describe('for any JSON value serialised and signed the way the service does', () => {
    const signedValue = fc.record({ value: unicodeJsonValue(), secret: unicodeString({ minLength: 1 }), pretty: fc.boolean() })

    it('verifies, whether the body is sent compact or pretty-printed', async () => {
      await fc.assert(
        fc.asyncProperty(signedValue, async ({ value, secret, pretty }) => {
          const signature = await sign(gsonText(value), secret)
          const sent = pretty ? gsonText(value, 2) : gsonText(value)
          expect(await verifySignature(sent, signature, secret)).toBe(true)
        }),
      )
    })

    it('fails after any change to a non-whitespace byte of the body', async () => {
      await fc.assert(
        fc.asyncProperty(signedValue, fc.nat(), fc.integer({ min: 1, max: 255 }), async ({ value, secret }, at, delta) => {
          const body = encode(gsonText(value))
          const signature = await sign(body, secret)
          const nonWhitespace = [...body.keys()].filter((i) => ![0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d].includes(body[i] as number))
          const target = nonWhitespace[at % nonWhitespace.length] as number
          const changed = body.slice()
          changed[target] = ((changed[target] as number) + delta) % 256
          // Turning a byte into whitespace removes it, which is a change the canonical form must still see.
          expect(await verifySignature(changed, signature, secret)).toBe(false)
        }),
      )
    })

    it('with unicodeWhitespace: true, verifies a signature over the body with every Unicode whitespace removed, and only that', async () => {
      // JavaScript's \s, plus what Python's \s adds: U+0085 and U+001C–U+001F.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the information separators are the point
      const whitespace = /[\s\u0085\u001C-\u001F]/u
      const stripAll = (text: string) => [...text].filter((c) => !whitespace.test(c)).join('')
      await fc.assert(
        fc.asyncProperty(signedValue, fc.nat(), async ({ value, secret, pretty }, at) => {
          const sent = pretty ? gsonText(value, 2) : gsonText(value)
          const signature = await sign(stripAll(sent), secret)
          expect(await verifySignature(sent, signature, secret, { unicodeWhitespace: true })).toBe(true)
          // Dropping a character that is not whitespace, preferably one next to whitespace, breaks it.
          const chars = [...sent]
          const visible = chars.flatMap((c, i) => (whitespace.test(c) ? [] : [i]))
          const beside = visible.filter((i) => whitespace.test(chars[i - 1] ?? '') || whitespace.test(chars[i + 1] ?? ''))
          const pool = beside.length > 0 ? beside : visible
          const drop = pool[at % pool.length] as number
          const edited = chars.filter((_, i) => i !== drop).join('')
          expect(await verifySignature(edited, signature, secret, { unicodeWhitespace: true })).toBe(false)
        }),
      )
    })

    it('fails after any change to the signature', async () => {
      await fc.assert(
        fc.asyncProperty(signedValue, fc.nat(63), fc.constantFrom(...'0123456789abcdef'), async ({ value, secret }, at, digit) => {
          const body = gsonText(value)
          const signature = await sign(body, secret)
          fc.pre(signature[at] !== digit)
          const changed = signature.slice(0, at) + digit + signature.slice(at + 1)
          expect(await verifySignature(body, changed, secret)).toBe(false)
        }),
      )
    })
  })
})

describe('a body on shared memory', () => {
  // A caller's view may be on a SharedArrayBuffer (a worker's buffer): the same bytes, the same answer, never a thrown error.
  const shared = (bytes: Uint8Array, offset: number) => {
    const view = new Uint8Array(new SharedArrayBuffer(bytes.length + offset + 3), offset, bytes.length)
    view.set(bytes)
    return view
  }

  it('is signed and verified as the same bytes elsewhere, compact or with whitespace, at any offset', async () => {
    for (const text of ['{"event":"ping","name":"中"}', '{ "event": "ping",\n  "name": "中" }', '']) {
      const header = await sign(text, SECRET)
      for (const offset of [0, 1, 2, 3]) {
        const body = shared(encode(text), offset)
        await expect(sign(body, SECRET)).resolves.toBe(header)
        await expect(verifySignature(body, header, SECRET)).resolves.toBe(true)
        await expect(verifySignature(body, '0'.repeat(64), SECRET)).resolves.toBe(false)
      }
    }
  })
})

describe('a body of another kind', () => {
  const text = '{ "event": "ping", "name": "中" }'

  it('from another realm (a vm context) is read as the same bytes, on shared memory too', async () => {
    const header = await sign(text, SECRET)
    const bytes = [...encode(text)]
    for (const source of [
      `new Uint8Array(${JSON.stringify(bytes)})`,
      `new Uint8Array(new SharedArrayBuffer(${bytes.length + 2}), 2).map((_, i) => ${JSON.stringify(bytes)}[i] ?? 0).subarray(0, ${bytes.length})`,
    ]) {
      const body = runInNewContext(source) as Uint8Array
      expect(body instanceof Uint8Array).toBe(false)
      await expect(sign(body, SECRET)).resolves.toBe(header)
      await expect(verifySignature(body, header, SECRET)).resolves.toBe(true)
    }
  })

  it('is refused with a TypeError that names its kind and never its content, on every build alike', async () => {
    const header = await sign(text, SECRET)
    const secretish = encode('sk_live_do_not_show_it')
    for (const [body, named] of [
      [null, 'got null'],
      [undefined, 'got undefined'],
      [42, 'got number'],
      [{ toString: () => 'sk_live_do_not_show' }, 'got Object'],
      [secretish.buffer, 'got ArrayBuffer (wrap it: new Uint8Array(body))'],
      [new DataView(secretish.buffer), 'got DataView'],
      [new Uint16Array(secretish.buffer), 'got Uint16Array'],
      [new Int8Array(secretish.buffer), 'got Int8Array'],
    ] as const) {
      for (const call of [
        () => verifySignature(body as unknown as Uint8Array, header, SECRET),
        () => sign(body as unknown as Uint8Array, SECRET),
      ]) {
        const error = await call().then(
          () => expect.fail(`resolved for ${named}`),
          (thrown: unknown) => thrown,
        )
        expect(error).toBeInstanceOf(TypeError)
        expect((error as Error).message).toBe(`@hookguard/core: a body is a string or a Uint8Array, ${named}`)
      }
    }
  })
})

describe('sign', () => {
  it("reproduces the service's signature for each of its own Gson bodies", async () => {
    for (const vector of fixtures.vectors.filter((v) => v.valid && !v.name.includes('/'))) {
      expect(await sign(vector.body, vector.secret)).toBe(vector.signature)
    }
  })

  it('signs a pretty-printed body the same as its compact form', async () => {
    expect(await sign('{\n  "a": [1, 2]\n}', SECRET)).toBe(await sign('{"a":[1,2]}', SECRET))
  })

  it('throws a TypeError naming the package for an empty secret', async () => {
    await expect(sign('{}', '')).rejects.toThrow(/^@hookguard\/core: /)
  })
})

describe('signatureHint', () => {
  const body = encode('{"a":"x"}')
  /** The hint as it was told from the header's values, each split off and trimmed. */
  const byValues = (header: string) => {
    if (header.length > 1024) return 'header_wrong_length'
    const values = header.split(',').map((part) => part.trim())
    if (values.some((value) => value.length === 64 && /^[0-9a-f]+$/i.test(value))) return undefined
    return values.some((value) => /[^0-9a-f]/i.test(value)) ? 'header_not_hex' : 'header_wrong_length'
  }

  it("tells a header's fault from what it read of it, as from its trimmed values", () => {
    const digest = 'ab'.repeat(32)
    const piece = fc.constantFrom('a', 'F', '0', 'g', ',', ' ', '\t', '\u3000', '\ufeff', 'z', digest, `${digest},`, ' , ')
    const header = fc.array(piece, { maxLength: 30 }).map((pieces) => pieces.join(''))
    fc.assert(
      fc.property(header, (text) => {
        expect(signatureHint(text, parseSignatureHeader(text), ['s'], body)).toBe(byValues(text))
      }),
      { numRuns: 2000 },
    )
    for (const text of [',', ' '.repeat(64), 'g'.repeat(64), 'a b', ` ${digest.slice(1)}`, ','.repeat(1024), 'g'.repeat(1025)]) {
      expect(signatureHint(text, parseSignatureHeader(text), ['s'], body), JSON.stringify(text)).toBe(byValues(text))
    }
  })

  it('reads a refused header of a thousand commas once, cutting out no value and not again for the hint', async () => {
    const header = ','.repeat(1024)
    const receiver = createReceiver({ auth: { mode: 'secret', secret: SECRET } })
    const split = vi.spyOn(String.prototype, 'split')
    const slice = vi.spyOn(String.prototype, 'slice')
    try {
      const result = await receiver.verify({ method: 'POST', url: '/hooks', headers: { 'x-service-hmac-signature': header }, body })
      expect(result.ok || result.response.status).toBe(401)
      const calls = [...split.mock.contexts, ...slice.mock.contexts].filter((self) => String(self) === header)
      expect(calls).toHaveLength(0)
    } finally {
      split.mockRestore()
      slice.mockRestore()
    }
  })
})
