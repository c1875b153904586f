import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Sits between the engine and serve(): the first time a step reports its result, the proxy
 * throws the answer away and replies 500, as if the app had crashed right after the step's side
 * effect. The engine retries, the SDK runs the step again, and the step must not repeat its
 * side effect. Every step of every run is replayed once.
 */
export interface StepReplayProxy {
  url: string;
  /** Step ids (hashed, as the SDK reports them) whose first result was dropped. */
  replayed: Set<string>;
  close(): Promise<void>;
}

interface Op {
  id: string;
  op: string;
}

export async function startStepReplayProxy(target: string): Promise<StepReplayProxy> {
  const replayed = new Set<string>();
  const targetUrl = new URL(target);

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const upstream = http.request(
        {
          host: targetUrl.hostname,
          port: targetUrl.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on("data", (chunk: Buffer) => parts.push(chunk));
          answer.on("end", () => {
            const body = Buffer.concat(parts);
            if (req.method === "POST" && answer.statusCode === 206) {
              const ops = JSON.parse(body.toString("utf8")) as Op[];
              const fresh = ops.filter((op) => op.op === "StepRun" && !replayed.has(op.id));
              if (fresh.length > 0) {
                for (const op of fresh) replayed.add(op.id);
                res
                  .writeHead(500, { "content-type": "application/json" })
                  .end(JSON.stringify({ error: "dropped by proxy" }));
                return;
              }
            }
            res.writeHead(answer.statusCode ?? 502, answer.headers).end(body);
          });
        },
      );
      upstream.on("error", () => res.writeHead(502).end());
      upstream.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${targetUrl.pathname}`,
    replayed,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
