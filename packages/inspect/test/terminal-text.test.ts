import { describe, expect, it } from 'vitest'
import { terminalBlock, terminalLine } from '../src/terminal-text.ts'

// Every character that can make a terminal show other than what a sender sent: controls, and the
// marks that reorder what follows them on screen.
const C0 = Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(code))
const C1 = Array.from({ length: 0x21 }, (_, code) => String.fromCharCode(0x7f + code))
const REORDERING = ['\u061c', '\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069']
const SEPARATORS = ['\u2028', '\u2029']
const ORDINARY = ['plain ascii', 'été 密钥', 'مرحبا بالعالم', 'family 👨\u200d👩\u200d👧', 'ZWNJ مي\u200cخواهم']

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

  it('leaves every other character as it is: letters of any script, joiners in emoji and words', () => {
    for (const text of ORDINARY) {
      expect(terminalLine(text)).toBe(text)
      expect(terminalBlock(text)).toBe(text)
    }
  })
})
