import http from "node:http";
import https from "node:https";
import { canonicalJson, signatureHeader } from "./signing";

/** The app could not be reached or did not answer in time: the step's outcome is unknown. */
export class AppUnreachableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "AppUnreachableError";
  }
}

export interface AppResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * Talks HTTP to serve() endpoints over keep-alive connections (one request per step, so
 * connection reuse matters). With a signing key, bodies are sent as canonical JSON so the
 * signature the SDK recomputes from the parsed body matches byte for byte.
 */
export class AppClient {
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 128 });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 128 });
  private readonly inFlight = new Set<http.ClientRequest>();
  /** Requests sent since start. */
  calls = 0;
  /** Requests per function (`fnId` in the call's query), so a test can count one function's calls. */
  readonly callsByFunction = new Map<string, number>();
  private readonly replicas: string[];
  private nextReplica = 0;

  constructor(
    private readonly options: {
      signingKey?: string;
      timeoutMs: number;
      /** Origins of processes serving one app: calls to any of them go to each in turn. */
      replicaOrigins?: string[];
    },
  ) {
    this.replicas = (options.replicaOrigins ?? []).map((origin) => new URL(origin).origin);
  }

  /**
   * Where a call goes: with replicas, function calls (POST) to any of them are spread over all
   * of them round-robin, as a load balancer in front of stateless replicas does in production.
   * A sync (PUT) goes where it was asked to: it registers the app's one address.
   */
  private route(url: string, method: "POST" | "PUT"): URL {
    const target = new URL(url);
    if (method !== "POST" || !this.replicas.includes(target.origin)) return target;
    const origin = this.replicas[this.nextReplica++ % this.replicas.length] ?? target.origin;
    return new URL(`${target.pathname}${target.search}`, origin);
  }

  request(
    method: "POST" | "PUT",
    url: string,
    body: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<AppResponse> {
    this.calls++;
    const fnId = url.includes("fnId=") ? new URL(url).searchParams.get("fnId") : null;
    if (fnId) this.callsByFunction.set(fnId, (this.callsByFunction.get(fnId) ?? 0) + 1);
    // Canonical JSON only matters for the signature; plain stringify is much cheaper.
    const payload = this.options.signingKey ? canonicalJson(body) : JSON.stringify(body);
    const target = this.route(url, method);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(payload).toString(),
      ...extraHeaders,
    };
    if (this.options.signingKey)
      headers["x-inngest-signature"] = signatureHeader(payload, this.options.signingKey, Date.now());
    const transport = target.protocol === "https:" ? https : http;
    const agent = target.protocol === "https:" ? this.httpsAgent : this.httpAgent;

    return new Promise<AppResponse>((resolve, reject) => {
      const req = transport.request(
        target,
        { method, headers, agent, timeout: this.options.timeoutMs },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => {
            this.inFlight.delete(req);
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString("utf8"),
            });
          });
          res.on("error", (error) => {
            this.inFlight.delete(req);
            reject(
              new AppUnreachableError(`Reading the reply from ${target.origin} failed: ${error.message}`, {
                cause: error,
              }),
            );
          });
        },
      );
      this.inFlight.add(req);
      req.on("timeout", () => req.destroy(new Error(`no reply within ${this.options.timeoutMs} ms`)));
      req.on("error", (error) => {
        this.inFlight.delete(req);
        reject(
          new AppUnreachableError(`Calling ${target.origin}${target.pathname} failed: ${error.message}`, {
            cause: error,
          }),
        );
      });
      req.end(payload);
    });
  }

  /** Aborts requests in flight (engine shutdown); their jobs are picked up again after a restart. */
  abortAll(): void {
    for (const req of this.inFlight) req.destroy(new Error("engine shutting down"));
    this.inFlight.clear();
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}
