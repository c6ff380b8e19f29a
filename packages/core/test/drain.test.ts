import { describe, expect, it } from 'vitest'
import { drainedRefusal, wasDrained } from '../src/drain.ts'
import { payloadTooLarge } from '../src/errors.ts'

describe('wasDrained', () => {
  it('tells a refusal whose body was read to its end from one whose body was not', () => {
    expect(wasDrained(drainedRefusal(1024))).toBe(true)
    expect(wasDrained(payloadTooLarge(1024))).toBe(false)
  })

  it.each([null, undefined, 'payload_too_large', 413, {}])('answers false for %o', (value) => {
    expect(wasDrained(value)).toBe(false)
  })
})
