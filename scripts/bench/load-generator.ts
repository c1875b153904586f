import { Agent, request } from "node:http";

export interface LoadRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
  /**
   * Told the answer's status and body once it has arrived (the body is read only for a request
   * that has this): the exactly-once check of bench:webhook keeps what each delivery was answered.
   */
  answered?: (status: number, body: string) => void;
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
        const status = res.statusCode ?? 0;
        const { answered } = load;
        if (answered) {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (body += chunk));
          res.on("end", () => {
            answered(status, body);
            resolve(status);
          });
        } else {
          res.resume();
          res.on("end", () => resolve(status));
        }
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

/**
 * Open-loop load: requests start at a fixed arrival rate whatever the answers do, as independent
 * clients (Stripe's deliveries) arrive; each latency runs from the request's scheduled start, so a
 * server that falls behind is charged the queue it built (no coordinated omission). Connections
 * are kept alive and opened as needed, up to `maxConnections`; a warm-up runs first, unrecorded.
 */
export async function runOpenLoop(options: {
  baseUrl: string;
  requestsPerSecond: number;
  warmupMs: number;
  durationMs: number;
  maxConnections?: number;
  next: () => LoadRequest | undefined;
}): Promise<LoadResult & { offeredPerSecond: number; late: number }> {
  const url = new URL(options.baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxConnections ?? 512 });
  const intervalMs = 1000 / options.requestsPerSecond;
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let exhausted = false;
  let totalRequests = 0;
  let late = 0;
  const startedAt = performance.now();
  const warmupEnds = startedAt + options.warmupMs;
  const ends = warmupEnds + options.durationMs;
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; ; i++) {
    const scheduled = startedAt + i * intervalMs;
    if (scheduled >= ends) break;
    const wait = scheduled - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    // More than one interval behind its slot: the generator itself could not keep the rate.
    else if (wait < -intervalMs) late += 1;
    const load = options.next();
    if (!load) {
      exhausted = true;
      break;
    }
    const measured = scheduled >= warmupEnds;
    const request: Promise<void> = post(agent, url, load).then((status) => {
      totalRequests += 1;
      if (measured) {
        latencies.push(performance.now() - scheduled);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
      inFlight.delete(request);
    });
    inFlight.add(request);
  }
  await Promise.all(inFlight);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    totalRequests,
    requestsPerSecond: latencies.length / (options.durationMs / 1000),
    offeredPerSecond: options.requestsPerSecond,
    late,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies.at(-1) ?? 0,
    statuses,
    exhausted,
  };
}
