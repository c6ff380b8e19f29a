// autocannon ships no types and @types/autocannon is not installed: only what run.ts uses.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  namespace autocannon {
    type Context = Record<string, unknown>

    interface RequestParams {
      method?: string
      path?: string
      headers?: Record<string, string>
      body?: string | Buffer
    }

    interface Request extends RequestParams {
      /** Called each time the request is built; its result is what is sent. */
      setupRequest?: (request: RequestParams, context: Context) => RequestParams
      /** Called with the answer to this very request (autocannon keeps a per-connection FIFO). */
      onResponse?: (status: number, body: string, context: Context, headers: Record<string, string | string[]>) => void
    }

    interface Options {
      url: string
      connections?: number
      duration?: number
      pipelining?: number
      /** Seconds. */
      timeout?: number
      requests?: Request[]
    }

    interface Histogram {
      average: number
      mean: number
      stddev: number
      min: number
      max: number
      total: number
      p50: number
      p90: number
      p99: number
    }

    interface Result {
      duration: number
      errors: number
      timeouts: number
      mismatches: number
      non2xx: number
      resets: number
      '1xx': number
      '2xx': number
      '3xx': number
      '4xx': number
      '5xx': number
      statusCodeStats: Record<string, { count: number }>
      latency: Histogram
      requests: Histogram & { sent: number }
      throughput: Histogram
    }

    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance
  export = autocannon
}
