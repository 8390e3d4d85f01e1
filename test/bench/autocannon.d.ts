// Minimal types of autocannon (it ships none) for the benchmarks: what they pass and read.
declare module 'autocannon' {
  interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    requests?: Array<Request & { setupRequest?: (req: Request, context: Record<string, unknown>) => Request }>;
  }
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
    /** Count over the run (requests: how many answered). */
    total: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    errors: number;
    non2xx: number;
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
