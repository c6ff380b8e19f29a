import { appendFileSync, closeSync, createReadStream, existsSync, openSync, renameSync, writeSync } from 'node:fs'
import { DEFAULT_MAX_BODY_SIZE } from '@hookguard/core'
import { type InspectedRecord, MAX_RECORDED_ANSWER } from './record.ts'
import { checkRecord, type ShapeLimits } from './record-shape.ts'

/**
 * The `--save` file: one record a line (NDJSON), bytes as base64. It holds requests as received,
 * credentials included, so it is written for its owner only (0600).
 */

/** A record as one NDJSON line: bytes as base64. */
export function toLine(record: InspectedRecord): string {
  return JSON.stringify(record, (_key, value: unknown) =>
    value instanceof Uint8Array ? { base64: Buffer.from(value).toString('base64') } : value,
  )
}

/** A line back into a record; `undefined` when it is not one of the right shape ({@link checkRecord}). */
export function fromLine(line: string, limits: ShapeLimits = { maxBodySize: DEFAULT_MAX_BODY_SIZE }): InspectedRecord | undefined {
  try {
    const value = JSON.parse(line, (key, value: unknown) => {
      if (key === 'body' && typeof value === 'object' && value !== null && typeof (value as { base64?: unknown }).base64 === 'string') {
        return new Uint8Array(Buffer.from((value as { base64: string }).base64, 'base64'))
      }
      return value
    }) as unknown
    return checkRecord(value, limits)
  } catch {
    return undefined
  }
}

const base64Length = (bytes: number) => Math.ceil(bytes / 3) * 4

/** The longest line a record of these limits can be: its body and the app's answer as base64, and room for the rest. */
export function maxLineBytes({ maxBodySize }: ShapeLimits): number {
  return base64Length(maxBodySize) + base64Length(MAX_RECORDED_ANSWER) + 4 * 1024 * 1024
}

/**
 * The file's lines, read as a stream, never whole: a file grown past what a string can hold
 * (`ERR_STRING_TOO_LONG`) loads like any other. A line longer than `maxBytes` cannot be a record,
 * and is skipped as it streams, without being held (`undefined` in its place): `node:readline`
 * would build it as one string.
 */
export async function* readLines(file: string, maxBytes: number): AsyncGenerator<string | undefined> {
  let parts: Buffer[] = []
  let size = 0
  let overlong = false
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    let start = 0
    while (start <= chunk.length) {
      const newline = chunk.indexOf(0x0a, start)
      const end = newline < 0 ? chunk.length : newline
      if (!overlong && size + (end - start) > maxBytes) {
        overlong = true
        parts = []
        size = 0
      } else if (!overlong && end > start) {
        parts.push(chunk.subarray(start, end))
        size += end - start
      }
      if (newline < 0) break
      yield overlong ? undefined : Buffer.concat(parts, size).toString('utf8')
      parts = []
      size = 0
      overlong = false
      start = newline + 1
    }
  }
  if (overlong || size > 0) yield overlong ? undefined : Buffer.concat(parts, size).toString('utf8')
}

/** What loading a file found: the records in it, in order, and how many lines were not records. */
export async function loadRecords(
  file: string,
  limits: ShapeLimits,
  onRecord: (record: InspectedRecord) => void,
): Promise<{ skipped: number }> {
  let skipped = 0
  if (!existsSync(file)) return { skipped }
  for await (const line of readLines(file, maxLineBytes(limits))) {
    if (line !== undefined && line.trim() === '') continue
    const record = line === undefined ? undefined : fromLine(line, limits)
    if (record === undefined) skipped++
    else onRecord(record)
  }
  return { skipped }
}

/**
 * Replaces the file's content with these lines: written beside it, then renamed over it, so that
 * a crash mid-way leaves the old file, not half of the new one. Returns the bytes written.
 */
export function replaceLines(file: string, lines: Iterable<string>): number {
  const temporary = `${file}.${process.pid}.tmp`
  // `mode` applies to the file it creates: the renamed file is the owner's only, whatever the old one was.
  const fd = openSync(temporary, 'w', 0o600)
  let bytes = 0
  try {
    for (const line of lines) bytes += writeSync(fd, `${line}\n`)
  } finally {
    closeSync(fd)
  }
  renameSync(temporary, file)
  return bytes
}

/** Appends one line; returns the bytes written. */
export function appendLine(file: string, line: string): number {
  const text = `${line}\n`
  appendFileSync(file, text, { mode: 0o600 })
  return Buffer.byteLength(text)
}
