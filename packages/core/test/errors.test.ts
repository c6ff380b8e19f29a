import { afterEach, describe, expect, it } from 'vitest'
import { ERROR_STATUS, WebhookError, type WebhookErrorCode } from '../src/errors.ts'

const CODES = Object.keys(ERROR_STATUS) as WebhookErrorCode[]
const REFUSALS = CODES.filter((code) => ERROR_STATUS[code] < 500)
const FAULTS = CODES.filter((code) => ERROR_STATUS[code] >= 500)

/** The frames of a stack trace (`    at …` lines), without its first line. */
const frames = (error: Error) => (error.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at '))

describe('WebhookError', () => {
  const limit = Error.stackTraceLimit
  afterEach(() => {
    Error.stackTraceLimit = limit
  })

  it('answers as http-errors does: status, statusCode, expose, and no-store among its headers', () => {
    const error = new WebhookError('invalid_signature', 'The signature does not match.', { headers: { 'www-authenticate': 'x' } })
    expect(error).toBeInstanceOf(Error)
    expect([error.name, error.code, error.status, error.statusCode, error.expose]).toEqual([
      'WebhookError',
      'invalid_signature',
      401,
      401,
      true,
    ])
    expect(error.headers).toEqual({ 'cache-control': 'no-store', 'www-authenticate': 'x' })
  })

  // Capturing a trace cost several times the HMAC of a 1 KiB refusal; an unauthenticated request
  // must stay cheap, and a refusal is not a fault of the program that a trace would help find.
  it.each(REFUSALS)('captures no stack trace for a refusal (%s), and leaves the runtime’s limit as it was', (code) => {
    Error.stackTraceLimit = 7
    const error = new WebhookError(code, 'Refused.')
    expect(frames(error)).toEqual([])
    expect(error.stack).toBe('WebhookError: Refused.')
    expect(Error.stackTraceLimit).toBe(7)
  })

  it.each(FAULTS)('keeps the stack trace of a fault (%s), and its cause', (code) => {
    const cause = new Error('the store is down')
    const error = new WebhookError(code, 'Try again later.', { cause })
    expect(frames(error).length).toBeGreaterThan(0)
    expect(error.cause).toBe(cause)
  })

  it('is still made where the runtime will not let its stack trace limit be set', () => {
    const descriptor = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit') as PropertyDescriptor
    Object.defineProperty(Error, 'stackTraceLimit', { value: 10, writable: false, configurable: true })
    try {
      const error = new WebhookError('invalid_signature', 'The signature does not match.')
      expect([error.code, error.status]).toEqual(['invalid_signature', 401])
      expect(Error.stackTraceLimit).toBe(10)
    } finally {
      Object.defineProperty(Error, 'stackTraceLimit', descriptor)
    }
  })
})
