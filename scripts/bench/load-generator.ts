import { Agent, request } from "node:http";

export interface LoadRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface LoadResult {
  /** Requests answered in the measured window. */
  requests: number;
  /** Including the warm-up: what the target actually served. */
  totalRequests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  statuses: Record<number, number>;
  /** True when `next()` ran out of requests before the duration ended. */
  exhausted: boolean;
}

function post(agent: Agent, url: URL, load: LoadRequest): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method: "POST",
        path: load.path,
        headers: { ...load.headers, "content-length": Buffer.byteLength(load.body) },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(load.body);
  });
}

const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0
    ? 0
    : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number);

/**
 * Closed-loop load: `connections` keep-alive connections, each sending its next request as soon
 * as the previous answer arrived. A warm-up phase runs first and is not recorded.
 */
export async function runLoad(options: {
  baseUrl: string;
  connections: number;
  warmupMs: number;
  durationMs: number;
  next: () => LoadRequest | undefined;
}): Promise<LoadResult> {
  const url = new URL(options.baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let exhausted = false;
  const warmupEnds = Date.now() + options.warmupMs;
  const ends = warmupEnds + options.durationMs;
  let measuredFrom = 0;
  let totalRequests = 0;
  let measuredTo = 0;

  const worker = async (): Promise<void> => {
    for (;;) {
      const now = Date.now();
      if (now >= ends) return;
      const load = options.next();
      if (!load) {
        exhausted = true;
        return;
      }
      const started = process.hrtime.bigint();
      const status = await post(agent, url, load);
      totalRequests += 1;
      if (now >= warmupEnds) {
        if (measuredFrom === 0) measuredFrom = now;
        measuredTo = Date.now();
        latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  agent.destroy();

  latencies.sort((a, b) => a - b);
  const seconds = Math.max(1e-3, (measuredTo - measuredFrom) / 1000);
  return {
    requests: latencies.length,
    totalRequests,
    requestsPerSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies.at(-1) ?? 0,
    statuses,
    exhausted,
  };
}
