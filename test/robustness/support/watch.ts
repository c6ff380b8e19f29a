import { inspect } from 'node:util'
import { afterAll, afterEach, beforeAll, expect, vi } from 'vitest'

const CONSOLE_METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const

/** Everything written to the console or to stdout/stderr while it was installed. */
export interface Output {
  text(): string
  restore(): void
}

/**
 * Captures (and silences) every `console.*` call and every write to stdout and stderr, the ways a
 * framework's default error handling logs (Koa's `app.onerror`, Express's final handler, Hono's
 * default `onError`).
 */
export function captureOutput(): Output {
  const lines: string[] = []
  const spies = [
    ...CONSOLE_METHODS.map((method) =>
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
        lines.push(args.map((arg) => (typeof arg === 'string' ? arg : inspect(arg, { depth: 6 }))).join(' '))
      }),
    ),
    ...[process.stdout, process.stderr].map((stream) =>
      vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
        lines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'))
        return true
      }),
    ),
  ]
  return {
    text: () => lines.join('\n'),
    restore: () => {
      for (const spy of spies) spy.mockRestore()
    },
  }
}

/** Faults that would reach the process: a rejection nobody handled, an exception nobody caught. */
export interface ProcessFaults {
  seen(): unknown[]
  stop(): void
}

export function watchProcessFaults(): ProcessFaults {
  const seen: unknown[] = []
  const record = (fault: unknown) => seen.push(fault)
  process.on('unhandledRejection', record)
  process.on('uncaughtException', record)
  return {
    seen: () => seen,
    stop() {
      process.off('unhandledRejection', record)
      process.off('uncaughtException', record)
    },
  }
}

/**
 * Registers hooks that watch for process faults from the file's first test to its last, and fail
 * each test after which one has been seen: a fault belongs to no test, so no test would fail on it.
 */
export function failOnProcessFaults(): void {
  let faults: ProcessFaults
  beforeAll(() => {
    faults = watchProcessFaults()
  })
  afterAll(() => faults.stop())
  afterEach(() => {
    expect(faults.seen(), 'unhandled rejections and uncaught exceptions').toEqual([])
  })
}

/**
 * All an error can tell whoever logs or serialises it: message, stack, own properties as JSON,
 * and its causes, followed down the chain.
 */
export function describeError(error: unknown, depth = 0): string {
  if (!(error instanceof Object) || depth > 5) return String(error)
  const parts = [inspect(error, { depth: 6, showHidden: false })]
  const { message, stack, cause } = error as { message?: unknown; stack?: unknown; cause?: unknown }
  parts.push(String(message), String(stack))
  try {
    parts.push(JSON.stringify(Object.fromEntries(Object.getOwnPropertyNames(error).map((name) => [name, Reflect.get(error, name)]))))
  } catch {
    // Circular: inspect above has already printed what there is.
  }
  if (cause !== undefined) parts.push(describeError(cause, depth + 1))
  return parts.join('\n')
}

/**
 * Short values (an empty body, `{}`) would match any text by chance; every secret, credential and
 * body that the cases send is longer.
 */
const MIN_SENSITIVE_LENGTH = 8

/** Asserts that none of `sensitive` shows up in any of `places` (named, for the failure message). */
export function expectNothingLeaked(places: Record<string, string>, sensitive: Iterable<string>): void {
  // One assertion over every finding: an expect() per value and place was most of these tests' CPU.
  const found: string[] = []
  for (const value of new Set(sensitive)) {
    if (value.length < MIN_SENSITIVE_LENGTH) continue
    for (const [where, text] of Object.entries(places)) {
      if (text.includes(value)) found.push(`${where} contains ${JSON.stringify(value.slice(0, 40))}`)
    }
  }
  expect(found, 'sensitive values in what the app showed').toEqual([])
}

/** Waits, at most `ms`, until `done()` holds. */
export async function until(done: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
}
