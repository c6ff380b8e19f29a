import { describe, expect, it } from 'vitest'
import { terminalBlock, terminalLine } from '../src/terminal-text.ts'

// Every character that can make a terminal show other than what a sender sent: controls, and the
// marks that reorder what follows them on screen.
const C0 = Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(code))
const C1 = Array.from({ length: 0x21 }, (_, code) => String.fromCharCode(0x7f + code))
const REORDERING = ['\u061c', '\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069']
const SEPARATORS = ['\u2028', '\u2029']
const ORDINARY = [
  'plain ascii',
  'été 密钥',
  'مرحبا بالعالم',
  'family 👨\u200d👩\u200d👧',
  'ZWNJ مي\u200cخواهم',
  'heart \u2764\ufe0f',
  'an ideograph variant \u845b\u{e0100}',
  // England: the black flag, the tags g b e n g, the cancel tag.
  'flag \u{1f3f4}\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}',
]

/**
 * Every code point a terminal draws as nothing, or that changes how others are drawn without
 * showing itself: Unicode's format characters and default-ignorable code points, all of them.
 */
const INVISIBLE: string[] = []
for (let code = 0; code <= 0x10ffff; code++) {
  if (code >= 0xd800 && code <= 0xdfff) continue
  const char = String.fromCodePoint(code)
  if (/[\p{Cf}\p{Default_Ignorable_Code_Point}]/u.test(char)) INVISIBLE.push(char)
}
const hex = (char: string) => `U+${(char.codePointAt(0) as number).toString(16)}`

describe('text a sender wrote, on a terminal', () => {
  it('within a line: every control, reordering mark and separator replaced', () => {
    for (const unsafe of [...C0, ...C1, ...REORDERING, ...SEPARATORS]) {
      expect(terminalLine(`a${unsafe}b`), `U+${unsafe.charCodeAt(0).toString(16)}`).toBe('a\uFFFDb')
    }
  })

  it('as a block: tabs and line ends kept, a lone carriage return and everything else replaced', () => {
    expect(terminalBlock('a\tb\nc\r\nd')).toBe('a\tb\nc\r\nd')
    expect(terminalBlock('over\rwrite')).toBe('over\uFFFDwrite')
    for (const unsafe of [...C0.filter((c) => !'\t\n\r'.includes(c)), ...C1, ...REORDERING, ...SEPARATORS]) {
      expect(terminalBlock(`a${unsafe}b`), `U+${unsafe.charCodeAt(0).toString(16)}`).toBe('a\uFFFDb')
    }
  })

  it('every invisible code point replaced between ASCII letters, where `order.pa\u200bid` would show as `order.paid`', () => {
    expect(INVISIBLE.length).toBeGreaterThan(4000)
    for (const invisible of INVISIBLE) {
      expect(terminalLine(`pa${invisible}id`), hex(invisible)).toBe('pa\uFFFDid')
      expect(terminalBlock(`pa${invisible}id`), hex(invisible)).toBe('pa\uFFFDid')
    }
  })

  it('a tag outside a flag, and a joiner or variation selector at the start, replaced too', () => {
    expect(terminalLine('\u{e0067}\u{e007f}x')).toBe('\uFFFD\uFFFDx')
    expect(terminalLine('\u200dx\ufe0f')).toBe('\uFFFDx\uFFFD')
  })

  it('leaves every other character as it is: letters of any script, joiners in emoji and words', () => {
    for (const text of ORDINARY) {
      expect(terminalLine(text)).toBe(text)
      expect(terminalBlock(text)).toBe(text)
    }
  })
})
