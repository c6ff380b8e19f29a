// The Workers runtime's own module, typed for this repository's type-check, where the DOM and
// Node types are in scope and the Workers types' global form would clash with them: here it is
// taken from their importable form. A Worker project has it from `@cloudflare/workers-types` (or
// `wrangler types`), and the published declarations import it from there.
declare module 'cloudflare:workers' {
  import type { CloudflareWorkersModule } from '@cloudflare/workers-types'

  export const DurableObject: typeof CloudflareWorkersModule.DurableObject
  export type DurableObject<Env = unknown> = CloudflareWorkersModule.DurableObject<Env>
}
