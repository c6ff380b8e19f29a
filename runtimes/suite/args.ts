/** `--build=node --mock=http://127.0.0.1:1234` → `{ build: 'node', mock: 'http://…' }`. */
export function parseArgs(argv: readonly string[]): Record<string, string> {
  const args: Record<string, string> = {}
  for (const arg of argv) {
    const match = /^--([\w-]+)=(.*)$/.exec(arg)
    if (match !== null) args[match[1] as string] = match[2] as string
  }
  return args
}
