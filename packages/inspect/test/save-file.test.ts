import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sign } from '@hookguard/core'
import { afterEach, describe, expect, it } from 'vitest'
import { inspectCommand } from '../src/command.ts'
import { failedDiagnosis } from '../src/diagnose.ts'
import type { InspectedRecord } from '../src/record.ts'
import { fromLine, toLine } from '../src/ring.ts'
import { cleanup, inspector, SECRET, send } from './helpers.ts'

afterEach(cleanup)

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'hookguard-save-'))
  dirs.push(dir)
  return join(dir, 'records.ndjson')
}

function stored(id: number, extra: Record<string, unknown> = {}): InspectedRecord {
  const body = new TextEncoder().encode(`{"n":${id}}`)
  return {
    id,
    kind: 'delivery',
    time: 1_700_000_000_000 + id,
    source: 'sender',
    method: 'POST',
    url: `/hooks/${id}`,
    headers: [['content-type', 'application/json']],
    body,
    bodyBytes: body.byteLength,
    mode: 'secret',
    verdict: 'refused',
    status: 401,
    code: 'invalid_signature',
    durationMs: 1,
    ...extra,
  } as InspectedRecord
}

/** `hookguard inspect --save FILE` until its page answers; then the records it shows and what it wrote on stderr. */
async function startFrom(file: string): Promise<{ ids: number[]; stderr: string }> {
  const stdout: string[] = []
  let stderr = ''
  const controller = new AbortController()
  const io = {
    stdout: { write: (text: string) => stdout.push(text) },
    stderr: {
      write: (text: string) => {
        stderr += text
      },
    },
    env: { HOOKGUARD_SECRET: SECRET },
    signal: controller.signal,
  }
  const done = inspectCommand(['--json', '--port', '0', '--ui-port', '0', '--save', file], io)
  const ready = await Promise.race([
    (async () => {
      while (stdout.length === 0) await new Promise((resolve) => setTimeout(resolve, 20))
      return JSON.parse(stdout[0] as string) as { ui: string }
    })(),
    done.then((code) => {
      throw new Error(`the inspector stopped (${code}): ${stderr}`)
    }),
  ])
  const ui = new URL(ready.ui)
  const state = await send(`${ui.origin}/api/state`, {
    method: 'GET',
    headers: { 'x-inspect-token': new URLSearchParams(ui.hash.slice(1)).get('token') ?? '' },
  })
  controller.abort()
  expect(await done).toBe(0)
  const records = (JSON.parse(state.body.toString()) as { records: { id: number }[] }).records
  return { ids: records.map((r) => r.id), stderr }
}

describe('a save file that holds lines that are not records', () => {
  it('starts, skipping each line that is not a record of the right shape, and says how many once, without their content', async () => {
    const file = tempFile()
    const oversize = new Uint8Array(1024 * 1024 + 1).fill(0x61)
    const lines = [
      toLine(stored(1)),
      'JUNK-LINE-CONTENT not json',
      JSON.stringify({ ...JSON.parse(toLine(stored(2))), url: undefined }),
      toLine(stored(2 ** 60)),
      toLine(stored(3, { bodyBytes: 1e300 })),
      toLine(stored(4, { body: oversize, bodyBytes: oversize.byteLength })),
      toLine(stored(5, { headers: [['only-a-name']] })),
      toLine(stored(6, { url: 'http://elsewhere.example/x' })),
      toLine(stored(7, { status: 99_999 })),
      toLine(stored(8, { method: 'PO ST' })),
      toLine(stored(9, { diagnosis: { outcome: 'matched', tried: 'not a list' } })),
      toLine(stored(10, { app: { status: 200, headers: [], body: 'not bytes', durationMs: 1 } })),
      toLine(stored(11, { verdict: 'maybe' })),
      toLine(stored(12)),
      '{"id":13,"kind":"deliv',
    ]
    writeFileSync(file, `${lines.join('\n')}\n`)
    const { ids, stderr } = await startFrom(file)
    expect(ids).toEqual([1, 12])
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toMatch(/13 lines/)
    expect(stderr).not.toContain('JUNK')
    expect(stderr).not.toContain('hooks')
    // The file now holds the records kept, and ids go on after the last of them.
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(2)
  })
})

describe('a save file larger than the ring', () => {
  it('keeps only the last records of a file of many lines', async () => {
    const file = tempFile()
    const lines: string[] = []
    for (let id = 1; id <= 20_000; id++) lines.push(toLine(stored(id)))
    writeFileSync(file, `${lines.join('\n')}\n`)
    const { inspector: running } = await inspector({ save: file, maxRecords: 50 })
    expect(running.records().map((r) => r.id)).toEqual(Array.from({ length: 50 }, (_, i) => 19_951 + i))
  })

  it('starts from a file larger than a string can hold, read as a stream', async () => {
    const file = tempFile()
    writeFileSync(file, `${[1, 2, 3].map((id) => toLine(stored(id))).join('\n')}\n`)
    // 600 MB of zero bytes (sparse: no disk is used): one line, longer than any record can be.
    truncateSync(file, 600 * 1024 * 1024)
    appendFileSync(file, `\n${[4, 5].map((id) => toLine(stored(id))).join('\n')}\n`)
    const warnings: string[] = []
    const { inspector: running } = await inspector({ save: file, onWarning: (message) => warnings.push(message) })
    expect(running.records().map((r) => r.id)).toEqual([1, 2, 3, 4, 5])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/1 line/)
    expect(statSync(file).size).toBeLessThan(10_000)
  })
})

describe('a save file while the inspector runs', () => {
  async function deliver(receiveUrl: string, count: number, body: string): Promise<void> {
    const headers = { 'x-service-hmac-signature': await sign(body, SECRET) }
    for (let i = 0; i < count; i++) await send(`${receiveUrl}/hooks`, { headers, chunks: [body] })
  }

  it('is compacted once it holds more than twice the records the ring keeps', async () => {
    const file = tempFile()
    const { inspector: running, waitFor } = await inspector({ save: file, maxRecords: 5 })
    await deliver(running.receiveUrl, 40, '{"event":"ping"}')
    await waitFor(40)
    const lines = readFileSync(file, 'utf8').trim().split('\n')
    expect(lines.length).toBeLessThanOrEqual(10)
    // The newest are all there.
    expect(lines.map((line) => (JSON.parse(line) as { id: number }).id).slice(-5)).toEqual([36, 37, 38, 39, 40])
  })

  it('is compacted once it holds more than twice the bytes the ring keeps', async () => {
    const file = tempFile()
    const body = JSON.stringify({ event: 'ping', padding: 'x'.repeat(20_000) })
    const { inspector: running, waitFor } = await inspector({ save: file, maxBytes: 100_000 })
    await deliver(running.receiveUrl, 40, body)
    await waitFor(40)
    const kept = running.records()
    expect(kept.length).toBeLessThan(10)
    const ringOnDisk = kept.reduce((sum, record) => sum + toLine(record).length + 1, 0)
    expect(statSync(file).size).toBeLessThanOrEqual(2 * ringOnDisk + toLine(kept.at(-1) as InspectedRecord).length + 1)
  })
})

describe('a record’s notes in the save file', () => {
  it('come back as they were: a failed diagnosis, headers not forwarded, a note that failed', () => {
    const record = stored(7, { diagnosis: failedDiagnosis(), notForwarded: ['X-Service-Hmac-Signature'], annotationFailed: true })
    expect(fromLine(toLine(record))).toEqual(record)
    // Out of shape, they are not records.
    expect(fromLine(toLine(stored(8, { notForwarded: ['bad name'] })))).toBeUndefined()
    expect(fromLine(toLine(stored(9, { annotationFailed: 'yes' })))).toBeUndefined()
  })
})
