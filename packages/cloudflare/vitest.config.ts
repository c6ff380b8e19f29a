import { defineProject } from 'vitest/config'
import { sourceResolution } from '../../vitest.shared.ts'

// The claim rules, the sharding and the store's calls, on Node over a fake namespace: the files
// import the modules below the entry, since the entry's Durable Object class needs
// `cloudflare:workers`. The object itself runs in workerd, in the runtime matrix
// (runtimes/dedupe-workerd.ts, `pnpm test:runtimes --only=workerd`).
export default defineProject({
  ...sourceResolution,
  test: { name: 'cloudflare', include: ['test/**/*.test.ts'], isolate: false, pool: 'threads' },
})
