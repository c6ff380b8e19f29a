import { readFile } from 'node:fs/promises'
import * as util from 'node:util'
import { CommandFailure, UsageError } from './failures.ts'

/** Where a command writes: `process.stdout` and `process.stderr` fit, and so does a test's buffer. */
export interface Output {
  write(text: string): unknown
  /** Colour is used only when this is `true`. */
  isTTY?: boolean
}

/** Everything a command touches outside itself, injected so that commands run in-process in tests. */
export interface CliIo {
  stdout: Output
  stderr: Output
  env: Readonly<Record<string, string | undefined>>
  /** Read by `sign` and `send --file -`. `process.stdin` fits. */
  stdin?: AsyncIterable<Uint8Array | string> & { isTTY?: boolean }
  /** `listen` runs until this aborts (the command line aborts it on Ctrl-C). */
  signal?: AbortSignal
  /** Default: the global `fetch`. */
  fetch?: typeof fetch
}

type Colour = 'green' | 'red' | 'yellow' | 'dim' | 'bold'

/** Styles text for `output`, or leaves it plain when that is not a terminal or NO_COLOR is set (no-color.org). */
export function painter(output: Output, env: CliIo['env']): (colour: Colour, text: string) => string {
  // styleText arrived in Node 20.12; on an older 20 the output is plain.
  const { styleText } = util as Partial<typeof util>
  const enabled = styleText !== undefined && output.isTTY === true && !env.NO_COLOR && env.TERM !== 'dumb'
  // The decision is ours, made for the output we write to; Node's own check (from 20.20, 22.13)
  // would look at process.stdout instead.
  return enabled ? (colour, text) => styleText(colour, text, { validateStream: false }) : (_colour, text) => text
}

export async function readAll(input: AsyncIterable<Uint8Array | string>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  for await (const chunk of input) chunks.push(typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk)
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0))
  let offset = 0
  for (const chunk of chunks) {
    out.set(chunk, offset)
    offset += chunk.byteLength
  }
  return out
}

/** A file's bytes, or standard input's for `-`; signed as they are, never decoded. */
export async function readBody(path: string, io: CliIo): Promise<Uint8Array> {
  if (path !== '-') {
    try {
      return new Uint8Array(await readFile(path))
    } catch (error) {
      throw new CommandFailure(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`)
    }
  }
  // Waiting on a terminal would look like a hang; say what is missing instead.
  if (io.stdin === undefined || io.stdin.isTTY) throw new UsageError('no body: give a file, or pipe the body to standard input')
  return readAll(io.stdin)
}
