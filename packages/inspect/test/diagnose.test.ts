import { createHmac } from 'node:crypto'
import { sign } from '@hookguard/core'
import { escapeLikeGson, stripJavaWhitespace } from '@hookguard/core/adapter'
import { describe, expect, it } from 'vitest'
import { coveredSegments, diagnose, MAX_DIAGNOSED_BODY, secretLabel } from '../src/diagnose.ts'

const SECRET = 'whsec-diagnose-91ab'
const OLD = 'whsec-previous-77c0'
const text = (value: string) => new TextEncoder().encode(value)
/** As a relay that parsed and wrote the JSON again would send it: `<`, `&`, `=` unescaped, spaces after colons. */
const BODY = text('{"event": "order.paid", "data": {"url": "https://shop.example.com/p?id=42&utm=x", "note": "5 < 6"}}')

describe('diagnose', () => {
  it('names the service’s own form when the signature is right', async () => {
    const result = await diagnose({ body: BODY, header: await sign(BODY, SECRET), secrets: [SECRET] })
    expect(result.outcome).toBe('matched')
    expect(result.match).toMatchObject({ variant: 'service', secret: 1 })
  })

  it('names another configured secret (rotation), masked', async () => {
    const result = await diagnose({ body: BODY, header: await sign(BODY, OLD), secrets: [SECRET, OLD] })
    expect(result.match).toMatchObject({ variant: 'service', secret: 2, secretLabel: secretLabel(OLD, 1) })
    expect(result.match?.secretLabel).toMatch(/^#2 \(…[0-9a-f]{4}\)$/)
    expect(JSON.stringify(result)).not.toContain(OLD)
  })

  describe('with a refused signature', () => {
    it('finds the Gson-escaped form: something re-serialised the body', async () => {
      const header = await sign(escapeLikeGson(BODY) as Uint8Array, SECRET)
      expect((await diagnose({ body: BODY, header, secrets: [SECRET] })).match?.variant).toBe('gson')
    })

    it('finds the Unicode-whitespace form', async () => {
      const body = text('{"note": "a\u3000b"}')
      const header = await sign(text('{"note":"ab"}'), SECRET)
      expect((await diagnose({ body, header, secrets: [SECRET] })).match?.variant).toBe('unicode')
    })

    it('does not offer the Unicode form as a diagnosis where the receiver accepts it', async () => {
      const body = text('{"note": "a\u3000b"}')
      const header = await sign(text('{"note":"ab"}'), SECRET)
      const result = await diagnose({ body, header, secrets: [SECRET], unicodeWhitespace: true })
      expect(result.tried.some((t) => t.variant === 'unicode')).toBe(false)
    })

    it('finds a configured secret that needs trimming (a secret file’s trailing newline)', async () => {
      const result = await diagnose({ body: BODY, header: await sign(BODY, SECRET), secrets: [`${SECRET}\n`] })
      expect(result.match).toMatchObject({ variant: 'secret_trimmed', secret: 1 })
    })

    it('finds a sender that signs with a trailing newline on its secret', async () => {
      for (const suffix of ['\n', '\r\n']) {
        const result = await diagnose({ body: BODY, header: await sign(BODY, `${SECRET}${suffix}`), secrets: [SECRET] })
        expect(result.match?.variant).toBe('secret_newline')
      }
    })

    it('finds a header in upper case with spaces in it', async () => {
      const signature = (await sign(BODY, SECRET)).toUpperCase()
      const header = `${signature.slice(0, 32)} ${signature.slice(32)}`
      expect((await diagnose({ body: BODY, header, secrets: [SECRET] })).match?.variant).toBe('header_normalised')
    })

    it('finds a signature over the raw bytes with their whitespace', async () => {
      const header = createHmac('sha256', SECRET).update(BODY).digest('hex')
      expect((await diagnose({ body: BODY, header, secrets: [SECRET] })).match?.variant).toBe('raw_unstripped')
    })

    it('finds a signature over what JSON.stringify writes', async () => {
      // The sender serialised with Gson's escapes but signed JSON.stringify's text.
      const sent = escapeLikeGson(text('{"q":"a=b&c"}')) as Uint8Array
      const header = await sign(text('{"q":"a=b&c"}'), SECRET)
      expect((await diagnose({ body: sent, header, secrets: [SECRET] })).match?.variant).toBe('json_stringify')
    })

    it('says when no variant matches, with the first 8 hex digits of each side', async () => {
      const header = 'ab'.repeat(32)
      const result = await diagnose({ body: BODY, header, secrets: [SECRET] })
      expect(result).toMatchObject({ outcome: 'no_match', received8: ['abababab'], expected8: (await sign(BODY, SECRET)).slice(0, 8) })
      expect(result.tried.length).toBeGreaterThan(5)
      expect(result.tried.every((t) => /^[0-9a-f]{8}$/.test(t.digest8))).toBe(true)
    })
  })

  it('has nothing to compare without a header', async () => {
    expect((await diagnose({ body: BODY, header: null, secrets: [SECRET] })).outcome).toBe('no_header')
  })

  it('does not hash a body above the bound', async () => {
    const result = await diagnose({ body: new Uint8Array(MAX_DIAGNOSED_BODY + 1), header: 'ab'.repeat(32), secrets: [SECRET] })
    expect(result.tried).toEqual([])
  })
})

describe('coveredSegments', () => {
  it('marks exactly what Java’s strip removes', () => {
    const body = text('{ "a" :\t"b c",\r\n "d\u3000": 1 }\u000B')
    const segments = coveredSegments(body)
    const kept = segments
      .filter((s) => !s.removed)
      .map((s) => s.text)
      .join('')
    expect(kept).toBe(new TextDecoder().decode(stripJavaWhitespace(body)))
    const java = new Set([' ', '\t', '\n', '\u000B', '\f', '\r'])
    expect(segments.filter((s) => s.removed).every((s) => [...s.text].every((c) => java.has(c)))).toBe(true)
    expect(kept).toContain('\u3000')
  })
})
