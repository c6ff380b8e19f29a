/**
 * `bun 1.4.5`, `deno 2.9.6`, `node 24.21.0`, `workerd`: from the runtime itself, not from what the
 * caller meant to start. Node before 21 has no `navigator`; its own version names it there.
 */
export function runtimeName(): string {
  const agent = globalThis.navigator?.userAgent ?? ''
  const match = /^(Bun|Deno|Node\.js)\/v?(\S+)/.exec(agent)
  if (match !== null) return `${(match[1] as string).toLowerCase().replace('.js', '')} ${match[2]}`
  if (agent === 'Cloudflare-Workers') return 'workerd'
  const node = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node
  return node !== undefined ? `node ${node}` : agent || 'unknown runtime'
}

/** The runtime's name alone (`node`, `bun`, `deno`, `workerd`), for what differs between them by design. */
export function runtimeKind(): string {
  return runtimeName().split(' ')[0] as string
}
