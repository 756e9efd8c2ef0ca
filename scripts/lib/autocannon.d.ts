declare module "autocannon" {
  interface Histogram {
    readonly average: number
    readonly mean: number
    readonly stddev: number
    readonly min: number
    readonly max: number
    readonly total: number
    readonly p50: number
    readonly p90: number
    readonly p99: number
    readonly [percentile: string]: number
  }
  export interface Result {
    readonly duration: number
    readonly errors: number
    readonly timeouts: number
    readonly non2xx: number
    readonly resets: number
    readonly mismatches: number
    readonly "2xx": number
    readonly latency: Histogram
    readonly requests: Histogram
    readonly throughput: Histogram
    readonly statusCodeStats: Record<string, { readonly count: number }>
  }
  export interface RawRequest {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string | Buffer
  }
  export interface Options {
    readonly url: string
    readonly connections?: number
    readonly duration?: number
    readonly amount?: number
    /** Requests per second over all connections. */
    readonly overallRate?: number
    readonly timeout?: number
    readonly method?: string
    readonly headers?: Record<string, string>
    readonly body?: string
    readonly requests?: ReadonlyArray<
      RawRequest & {
        setupRequest?: (request: RawRequest, context: Record<string, unknown>) => RawRequest
        onResponse?: (status: number, body: string, context: Record<string, unknown>) => void
      }
    >
  }
  interface Instance extends PromiseLike<Result> {
    stop(): void
  }
  function autocannon(options: Options): Instance
  export default autocannon
}
