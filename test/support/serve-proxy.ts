import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A proxy in front of serve(), for the engine to call instead of the app. It records every call
 * (which run, which customer, when it started and ended), can hold each call for `delayMs` so
 * that overlaps are observable, and can drop the first result of every step (`replaySteps`), as
 * if the app had crashed right after the step's side effect.
 */
export interface ServeCall {
  runId: string;
  customerId: string | undefined;
  startedAt: number;
  endedAt: number;
}

export interface ServeProxy {
  url: string;
  calls: ServeCall[];
  replayed: Set<string>;
  close(): Promise<void>;
}

interface Op {
  id: string;
  op: string;
}

interface CallBody {
  event?: { data?: { customerId?: string } };
  ctx?: { run_id?: string };
}

export async function startServeProxy(
  target: string,
  options: { delayMs?: number; replaySteps?: boolean } = {},
): Promise<ServeProxy> {
  const calls: ServeCall[] = [];
  const replayed = new Set<string>();
  const targetUrl = new URL(target);

  const forward = (req: http.IncomingMessage, body: Buffer, res: http.ServerResponse, onDone: () => void) => {
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
          onDone();
          const reply = Buffer.concat(parts);
          if (options.replaySteps && req.method === "POST" && answer.statusCode === 206) {
            const ops = JSON.parse(reply.toString("utf8")) as Op[];
            const fresh = ops.filter((op) => op.op === "StepRun" && !replayed.has(op.id));
            if (fresh.length > 0) {
              for (const op of fresh) replayed.add(op.id);
              res.writeHead(500, { "content-type": "application/json" }).end('{"error":"dropped by proxy"}');
              return;
            }
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers).end(reply);
        });
      },
    );
    upstream.on("error", () => {
      onDone();
      res.writeHead(502).end();
    });
    upstream.end(body);
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (req.method !== "POST") {
        forward(req, body, res, () => undefined);
        return;
      }
      const parsed = JSON.parse(body.toString("utf8")) as CallBody;
      const call: ServeCall = {
        runId: parsed.ctx?.run_id ?? "",
        customerId: parsed.event?.data?.customerId,
        startedAt: performance.now(),
        endedAt: Number.NaN,
      };
      const send = () =>
        forward(req, body, res, () => {
          call.endedAt = performance.now();
          calls.push(call);
        });
      if (options.delayMs) setTimeout(send, options.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${targetUrl.pathname}`,
    calls,
    replayed,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
