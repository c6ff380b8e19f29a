#!/usr/bin/env node
import type { Output } from './cli/io.ts'
import { run } from './cli/run.ts'

// Ctrl-C (and a service manager's SIGTERM) end `listen` cleanly: the server closes, exit code 0.
// Signal listeners do not keep the process alive, so the other commands still exit when done.
const controller = new AbortController()
process.once('SIGINT', () => controller.abort())
process.once('SIGTERM', () => controller.abort())

/**
 * `process.stdout` or `process.stderr`, for a reader that may leave early (`hookguard send … |
 * head -1`). Node reports the closed pipe as an EPIPE 'error' event, which unhandled ends the
 * process with a stack trace. A C program would die of SIGPIPE without a word; here the rest of
 * the output is dropped, `listen` stops (no one reads what it prints), and a command that was
 * finishing exits with its own code.
 */
function pipe(stream: NodeJS.WriteStream): Output {
  let closed = false
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
    closed = true
    controller.abort()
  })
  return {
    write: (text: string) => closed || stream.write(text),
    get isTTY() {
      return stream.isTTY
    },
  }
}

void run(process.argv.slice(2), {
  stdout: pipe(process.stdout),
  stderr: pipe(process.stderr),
  env: process.env,
  // Touched only by the commands that read it, so that the others never open standard input.
  get stdin() {
    return process.stdin
  },
  signal: controller.signal,
}).then((code) => {
  // exitCode rather than exit(): pending writes to a piped stdout are flushed first.
  process.exitCode = code
})
