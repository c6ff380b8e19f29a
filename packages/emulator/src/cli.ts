#!/usr/bin/env node
import { run } from './cli/run.ts'

// Ctrl-C (and a service manager's SIGTERM) end `listen` cleanly: the server closes, exit code 0.
// Signal listeners do not keep the process alive, so the other commands still exit when done.
const controller = new AbortController()
process.once('SIGINT', () => controller.abort())
process.once('SIGTERM', () => controller.abort())

void run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
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
