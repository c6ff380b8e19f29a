import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createReceiver, type IncomingRequest, sign, verifySignature, type WebhookOptions } from '@hookguard/core'
import { formatBasicAuthorization } from '@hookguard/core/adapter'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { timingSafeEqual } from '../src/constant-time.ts'

// constant-time.test.ts pins what timingSafeEqual does; this file proves that every comparison of
// a secret, a credential, a digest or a MAC goes through it, in the source and at run time.

vi.mock('../src/constant-time.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/constant-time.ts')>()
  return { ...original, timingSafeEqual: vi.fn(original.timingSafeEqual) }
})

const SOURCE = fileURLToPath(new URL('../src/', import.meta.url))

/** The core's TypeScript sources, comments removed (they may quote code). */
function sources(dir = SOURCE): { file: string; code: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    if (!entry.name.endsWith('.ts')) return []
    const code = readFileSync(path, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|\s)\/\/.*$/gm, '$1')
    return [{ file: relative(SOURCE, path), code }]
  })
}

const SENSITIVE = /secret|password|passwd|credential|digest|\bmac\b|hmac|signature|expected|actual|candidate|presented/i
const BENIGN = /^(undefined|null|true|false|-?\d[\d_.]*|'[^']*'|"[^"]*"|`[^`]*`|[A-Z][A-Z0-9_]*)$/

/** The comparisons with `===`, `!==`, `==` or `!=` in `code` whose operands could hold secret bytes. */
function suspiciousComparisons(code: string): string[] {
  const found: string[] = []
  for (const match of code.matchAll(/[!=]==?/g)) {
    const at = match.index
    // `=>`, `<=`, `>=` and assignments are not comparisons.
    if (code[at - 1] === '=' || code[at - 1] === '<' || code[at - 1] === '>' || code[at + match[0].length] === '>') continue
    const left = operandBefore(code, at)
    const right = operandAfter(code, at + match[0].length)
    const operands = [left, right]
    // Against a literal, a constant, a type or a length, nothing secret is compared.
    if (operands.some((o) => BENIGN.test(o) || o.startsWith('typeof ') || o.endsWith('.length'))) continue
    if (operands.some((o) => SENSITIVE.test(o))) found.push(`${left} ${match[0]} ${right}`)
  }
  return found
}

function operandBefore(code: string, end: number): string {
  let i = end - 1
  while (code[i] === ' ') i--
  const stop = i + 1
  let depth = 0
  for (; i >= 0; i--) {
    const c = code[i] as string
    if (c === ')' || c === ']') depth++
    else if (c === '(' || c === '[') {
      if (depth === 0) break
      depth--
    } else if (depth === 0 && !/[\w$.'"`?]/.test(c)) break
  }
  return code.slice(i + 1, stop).trim()
}

function operandAfter(code: string, start: number): string {
  let i = start
  while (code[i] === ' ') i++
  const begin = i
  if (code.startsWith('typeof ', i)) return code.slice(i, code.indexOf('\n', i)).trim()
  if (code.startsWith('await ', i)) i += 'await '.length
  let depth = 0
  for (; i < code.length; i++) {
    const c = code[i] as string
    if (c === '(' || c === '[') depth++
    else if (c === ')' || c === ']') {
      if (depth === 0) break
      depth--
    } else if (depth === 0 && !/[\w$.'"`?-]/.test(c)) break
  }
  return code.slice(begin, i).trim()
}

describe('every comparison of a secret', () => {
  describe('in the source of @hookguard/core', () => {
    const files = sources()

    it('is defined once: timingSafeEqual in constant-time.ts', () => {
      const definitions = files.filter(({ code }) => /function\s+timingSafeEqual\b|timingSafeEqual\s*=/.test(code)).map(({ file }) => file)
      expect(definitions).toEqual(['constant-time.ts'])
    })

    it.each([
      ['signature.ts', 'signatures'],
      ['secret-digest.ts', 'Basic credentials and the token endpoint’s client'],
      ['token.ts', 'token MACs'],
    ])('is imported from constant-time.ts by %s, which compares %s', (file) => {
      const { code } = files.find((source) => source.file === file) ?? { code: '' }
      expect(code).toMatch(/import\s*\{[^}]*\btimingSafeEqual\b[^}]*\}\s*from\s*'\.\/constant-time\.ts'/)
      expect(code).toMatch(/\btimingSafeEqual\(/)
    })

    it('has Basic credentials and the token endpoint compared through SecretDigest (secret-digest.ts), not by hand', () => {
      for (const file of ['authenticate.ts', 'token-endpoint.ts']) {
        const { code } = files.find((source) => source.file === file) ?? { code: '' }
        expect(code, file).toMatch(/new SecretDigest\(/)
        expect(code, file).toMatch(/\.matches\(/)
      }
    })

    it('compares no secret, credential, digest, MAC or signature with === or !== anywhere else', () => {
      const found = files
        .filter(({ file }) => file !== 'constant-time.ts')
        .flatMap(({ file, code }) => suspiciousComparisons(code).map((c) => `${file}: ${c}`))
      expect(found).toEqual([])
    })

    it('uses no other way to compare bytes (Buffer#equals, Buffer.compare, node:crypto’s timingSafeEqual, localeCompare)', () => {
      for (const { file, code } of files) {
        expect(code, file).not.toMatch(/\.equals\(|Buffer\.compare\(|\.compare\(|localeCompare\(/)
        expect(code, file).not.toMatch(/import\s*\{[^}]*timingSafeEqual[^}]*\}\s*from\s*'node:crypto'|crypto\.timingSafeEqual/)
      }
    })

    it('would notice a digest or a secret compared with === (the scan itself)', () => {
      expect(suspiciousComparisons('if (toHex(digest) === header) return true')).toHaveLength(1)
      expect(suspiciousComparisons('const ok = presented !== secret')).toHaveLength(1)
      expect(suspiciousComparisons("if (mac === undefined || signature.length !== 64 || typeof secret !== 'string') return")).toEqual([])
    })
  })

  describe('at run time', () => {
    const compare = vi.mocked(timingSafeEqual)
    let original: typeof timingSafeEqual

    beforeEach(async () => {
      original = (await vi.importActual<typeof import('../src/constant-time.ts')>('../src/constant-time.ts')).timingSafeEqual
      compare.mockImplementation(original)
      compare.mockClear()
    })
    afterEach(() => {
      compare.mockImplementation(original)
    })

    const SECRET = 'whsec-single-comparison'
    const BODY = '{"event":"customer.created","id":884211}'
    const BASIC = { username: 'hook-user', password: 'correct horse' }
    const OAUTH = { mode: 'oauth2', appId: 'wx-app-1042', secret: 'oauth-secret-4f1d9a' } as const
    const NOW = Date.UTC(2026, 0, 15)

    const request = (url: string, headers: Record<string, string> = {}): IncomingRequest => ({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', ...headers },
      body: new TextEncoder().encode(BODY),
    })
    const tokenRequest = (secret: string): IncomingRequest => ({
      method: 'GET',
      url: `/token?${new URLSearchParams({ appid: OAUTH.appId, secret, grant_type: 'client_credentials' })}`,
      headers: {},
      body: new Uint8Array(0),
    })
    const oauth = (extra: Partial<Extract<WebhookOptions['auth'], { mode: 'oauth2' }>> = {}): WebhookOptions => ({
      auth: { ...OAUTH, ...extra },
      clock: () => NOW,
    })

    async function issue(options: WebhookOptions = oauth()): Promise<string> {
      const answer = await createReceiver(options, { role: 'token' }).token(tokenRequest(OAUTH.secret))
      return (JSON.parse(answer.body) as { access_token: string }).access_token
    }

    /** The lengths of the two inputs of every call since the last clear. */
    const calls = () => compare.mock.calls.map(([actual, expected]) => [actual.length, expected.length])

    it('checks a signature through it: the 32-byte HMAC against the 32 bytes the header holds', async () => {
      expect(await verifySignature(BODY, await sign(BODY, SECRET), SECRET)).toBe(true)
      expect(calls().length).toBeGreaterThanOrEqual(1)
      expect(calls().every(([a, b]) => a === 32 && b === 32)).toBe(true)

      compare.mockClear()
      expect(await verifySignature(BODY, 'ab'.repeat(32), SECRET)).toBe(false)
      expect(calls().length).toBeGreaterThanOrEqual(1)
    })

    it('checks Basic credentials through it: both halves, each hashed to 32 bytes, even when the username is wrong', async () => {
      const receiver = createReceiver({ auth: { mode: 'basic', ...BASIC } })
      const right = await receiver.verify(request('/hooks', { authorization: formatBasicAuthorization(BASIC.username, BASIC.password) }))
      expect(right.ok).toBe(true)
      expect(calls()).toEqual([
        [32, 32],
        [32, 32],
      ])

      compare.mockClear()
      const wrong = await receiver.verify(request('/hooks', { authorization: formatBasicAuthorization('someone-else', BASIC.password) }))
      expect(wrong.ok).toBe(false)
      expect(calls()).toHaveLength(2)
    })

    it('checks a token’s MAC through it, once for every key in tokenKeys, whichever matches', async () => {
      const token = await issue()
      compare.mockClear()
      expect((await createReceiver(oauth()).verify(request(`/hooks?access_token=${token}`))).ok).toBe(true)
      expect(calls()).toEqual([[32, 32]])

      compare.mockClear()
      const rotating = createReceiver(oauth({ tokenKeys: [OAUTH.secret, 'token-key-older'] }))
      expect((await rotating.verify(request(`/hooks?access_token=${token}`))).ok).toBe(true)
      expect(calls()).toEqual([
        [32, 32],
        [32, 32],
      ])
    })

    it('checks the token endpoint’s app id and secret through it, both of them', async () => {
      const answer = await createReceiver(oauth(), { role: 'token' }).token(tokenRequest(OAUTH.secret))
      expect(answer.status).toBe(200)
      expect(calls()).toEqual([
        [32, 32],
        [32, 32],
      ])
    })

    it('refuses the right signature, credentials, token and client when it says they differ', async () => {
      const token = await issue()
      compare.mockReturnValue(false)
      expect(await verifySignature(BODY, await sign(BODY, SECRET), SECRET)).toBe(false)
      const basic = createReceiver({ auth: { mode: 'basic', ...BASIC } })
      const credentials = formatBasicAuthorization(BASIC.username, BASIC.password)
      expect(await basic.verify(request('/hooks', { authorization: credentials }))).toMatchObject({
        ok: false,
        error: { code: 'invalid_credentials' },
      })
      expect(await createReceiver(oauth()).verify(request(`/hooks?access_token=${token}`))).toMatchObject({
        ok: false,
        error: { code: 'invalid_token' },
      })
      expect((await createReceiver(oauth(), { role: 'token' }).token(tokenRequest(OAUTH.secret))).status).toBe(401)
    })

    it('accepts a wrong signature, password, MAC and client secret when it says they match: nothing else decides', async () => {
      const [claims] = (await issue()).split('.')
      compare.mockReturnValue(true)
      expect(await verifySignature(BODY, 'ab'.repeat(32), SECRET)).toBe(true)
      const basic = createReceiver({ auth: { mode: 'basic', ...BASIC } })
      const wrong = formatBasicAuthorization(BASIC.username, 'wrong password')
      expect((await basic.verify(request('/hooks', { authorization: wrong }))).ok).toBe(true)
      // The claims as issued, under a MAC of 32 zero bytes.
      const forged = `${claims}.${'A'.repeat(43)}`
      expect((await createReceiver(oauth()).verify(request(`/hooks?access_token=${forged}`))).ok).toBe(true)
      expect((await createReceiver(oauth(), { role: 'token' }).token(tokenRequest('wrong secret'))).status).toBe(200)
    })
  })
})
