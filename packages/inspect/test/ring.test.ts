import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { InspectedRecord } from '../src/record.ts'
import { fromLine, Ring, toLine } from '../src/ring.ts'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'hookguard-inspect-'))
  dirs.push(dir)
  return join(dir, 'records.ndjson')
}

function record(ring: Ring, size = 10, extra: Partial<InspectedRecord> = {}): InspectedRecord {
  return {
    id: ring.nextId(),
    kind: 'delivery',
    time: Date.now(),
    source: 'sender',
    method: 'POST',
    url: '/hooks',
    headers: [['content-type', 'application/json']],
    body: new Uint8Array(size).fill(0x61),
    bodyBytes: size,
    mode: 'secret',
    verdict: 'verified',
    status: 200,
    durationMs: 1,
    ...extra,
  }
}

describe('Ring', () => {
  it('keeps at most maxRecords, dropping the oldest', () => {
    const ring = new Ring({ maxRecords: 3 })
    for (let i = 0; i < 5; i++) ring.add(record(ring))
    expect(ring.all().map((r) => r.id)).toEqual([3, 4, 5])
  })

  it('returns the ids it evicted to stay within its bounds, oldest first, for the page to drop', () => {
    const ring = new Ring({ maxRecords: 2, maxBytes: 5000 })
    expect(ring.add(record(ring))).toEqual([])
    expect(ring.add(record(ring))).toEqual([])
    expect(ring.add(record(ring))).toEqual([1])
    expect(ring.add(record(ring, 4000))).toEqual([2, 3])
    expect(ring.all().map((r) => r.id)).toEqual([4])
  })

  it('keeps at most maxBytes under a flood of large deliveries', () => {
    const ring = new Ring({ maxBytes: 100_000 })
    for (let i = 0; i < 50; i++) ring.add(record(ring, 30_000))
    expect(ring.bytes).toBeLessThanOrEqual(100_000)
    expect(ring.size).toBe(3)
    expect(ring.all().at(-1)?.id).toBe(50)
  })

  it('keeps the newest record even when it alone is over the byte bound', () => {
    const ring = new Ring({ maxBytes: 1000 })
    ring.add(record(ring, 10))
    ring.add(record(ring, 5000))
    expect(ring.all().map((r) => r.id)).toEqual([2])
  })

  it('refuses bounds that are not positive integers', () => {
    expect(() => new Ring({ maxRecords: 0 })).toThrow(TypeError)
    expect(() => new Ring({ maxBytes: 1.5 })).toThrow(TypeError)
  })

  it('is made with a save file only by Ring.open, which loads the file first', () => {
    expect(() => new Ring({ save: tempFile() })).toThrow(/Ring\.open/)
  })

  describe('with save', () => {
    it('appends each record as an NDJSON line and reloads them, bytes intact, on the next start', async () => {
      const file = tempFile()
      const first = await Ring.open({ save: file })
      const binary = new Uint8Array([0, 255, 10, 13, 0x22])
      first.add(
        record(first, 0, { body: binary, bodyBytes: 5, app: { status: 200, headers: [], body: new Uint8Array([1, 2]), durationMs: 2 } }),
      )
      first.add(record(first))
      expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(2)

      const second = await Ring.open({ save: file })
      expect(second.all().map((r) => r.id)).toEqual([1, 2])
      expect(second.get(1)?.body).toEqual(binary)
      expect(second.get(1)?.app?.body).toEqual(new Uint8Array([1, 2]))
      // Ids go on from the last one, so permalinks stay unique across runs.
      expect(second.nextId()).toBe(3)
    })

    it('compacts the file to what the bounds keep, and skips a line cut short', async () => {
      const file = tempFile()
      const ring = new Ring()
      const lines = Array.from({ length: 5 }, () => toLine(record(ring)))
      writeFileSync(file, `${lines.join('\n')}\n{"id":6,"kind":"deliv`)
      const warnings: string[] = []
      const reloaded = await Ring.open({ save: file, maxRecords: 2, onWarning: (message) => warnings.push(message) })
      expect(reloaded.all().map((r) => r.id)).toEqual([4, 5])
      expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(2)
      expect(warnings).toEqual([expect.stringMatching(/^hookguard inspect: 1 line of .* is not a record/)])
    })

    it('rewrites the file after a delete and a clear', async () => {
      const file = tempFile()
      const ring = await Ring.open({ save: file })
      ring.add(record(ring))
      ring.add(record(ring))
      ring.delete(1)
      expect((await Ring.open({ save: file })).all().map((r) => r.id)).toEqual([2])
      ring.clear()
      expect(readFileSync(file, 'utf8')).toBe('')
    })
  })

  it('reads back only lines that are records', () => {
    expect(fromLine('not json')).toBeUndefined()
    expect(fromLine('{"id":1}')).toBeUndefined()
  })
})

describe('the save file', () => {
  it('is readable by its owner only, even when it existed before with wider permissions', async () => {
    const file = tempFile()
    writeFileSync(file, '')
    chmodSync(file, 0o644)
    const ring = await Ring.open({ save: file })
    ring.add(record(ring))
    expect(statSync(file).mode & 0o777).toBe(0o600)
  })
})
