/** autocannon, the HTTP load generator, typed for what the benches use of it. */

export interface AutocannonOptions {
  url: string
  method: 'POST'
  headers: Record<string, string>
  body: string
  connections: number
  pipelining?: number
  /** Seconds of load… */
  duration?: number
  /** …or this many requests. */
  amount?: number
  /** Seconds before a request counts as timed out. */
  timeout?: number
}

export interface AutocannonResult {
  requests: { total: number; average: number }
  latency: { p99: number }
  non2xx: number
  errors: number
  timeouts: number
}

// No declarations for autocannon are installed; a variable specifier keeps TypeScript from looking.
const specifier: string = 'autocannon'
export const autocannon = (await import(specifier)).default as (options: AutocannonOptions) => Promise<AutocannonResult>
