import { createHash, randomBytes } from 'node:crypto'
import { timingSafeEqual } from '@hookguard/core/adapter'
import type { RecordSource } from './record.ts'

/**
 * The header by which the page's own requests (a replay, a resend, a preset) say so, for their
 * row. Its value starts with a secret made for this run, which no sender knows: a sender's copy of
 * the header is the sender's data, recorded and forwarded untouched like any other, and its row
 * says `sender`. Only the inspector's own copy is taken out before the app.
 */
export const SOURCE_HEADER = 'x-hookguard-inspect-source'
const SOURCES = new Set<RecordSource>(['replay', 'resend', 'preset'])

/** One run's mark: writes the header's value for the page's requests, and reads back only those. */
export interface SourceMark {
  /** The value for a request of `source`, with a preset's key. */
  value(source: Exclude<RecordSource, 'sender'>, key?: string): string
  /** What a header value says, when it carries this run's secret; `undefined` when not (a sender's). */
  read(value: string | undefined): { source: RecordSource; key?: string } | undefined
}

export function createSourceMark(secret: string = randomBytes(24).toString('base64url')): SourceMark {
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest()
  const expected = digest(secret)
  return {
    value: (source, key) => (key === undefined ? `${secret};${source}` : `${secret};${source};${key}`),
    read(value) {
      if (value === undefined) return undefined
      const [given = '', source = '', key] = value.split(';')
      // Hashed first: the comparison's time tells nothing of the secret, its length included.
      if (!timingSafeEqual(digest(given), expected) || !SOURCES.has(source as RecordSource)) return undefined
      return { source: source as RecordSource, ...(key !== undefined && { key }) }
    },
  }
}
