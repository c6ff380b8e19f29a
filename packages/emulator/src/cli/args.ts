import type { ParseArgsConfig } from 'node:util'
import { MODES, type Mode, parseCommandLine, RECEIVER_OPTIONS } from '@hookguard/inspect/cli'
import { UsageError } from './failures.ts'

type Options = NonNullable<ParseArgsConfig['options']>

/** What `parseArgs` gives for options none of which is `multiple`. */
export interface Parsed<T extends Options> {
  values: { [Name in keyof T]?: T[Name]['type'] extends 'boolean' ? boolean : string }
  positionals: string[]
}

/** `parseArgs`, strict, with positionals allowed, as `listen` and `inspect` parse their options. */
export function parseCommand<T extends Options>(args: readonly string[], options: T): Parsed<T> {
  return parseCommandLine(args, options) as Parsed<T>
}

export function wantsHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false
    if (arg === '--help' || arg === '-h') return true
  }
  return false
}

export function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new UsageError(`${flag} is required`)
  return value
}

export function mode(value: string | undefined): Mode {
  if (value === undefined) throw new UsageError(`--mode is required: ${MODES.join(', ')}`)
  const problem = RECEIVER_OPTIONS.mode.check(value)
  if (problem !== undefined) throw new UsageError(`--mode ${problem}`)
  return value as Mode
}

export function httpUrl(value: string | undefined, name: string): string {
  const url = required(value, name)
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw new UsageError(`${name} must be an http:// or https:// URL`)
  return url
}

export function atMostPositionals(positionals: readonly string[], max: number, what: string): void {
  // The extra values are not quoted: a mistyped flag can leave a secret among them.
  if (positionals.length > max) throw new UsageError(`expected ${what}, got ${positionals.length} arguments`)
}
