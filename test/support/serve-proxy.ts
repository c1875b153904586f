import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A proxy in front of serve(), for the engine to call instead of the app. It records every call
 * (which run, which customer, when it started and ended), can hold calls behind a gate so that
 * overlaps are certain rather than likely (`holdUntilArrived`), and can drop the first result of every step (`replaySteps`), as
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
  options: {
    /**
     * Calls for these customers are held until a call of every one of them has arrived, then all
     * go on together: each customer's first calls are in flight at once, whatever the machine's
     * speed, and a call the engine should not have sent meanwhile (a customer's second run) is
     * held among them, where an overlap shows it.
     */
    holdUntilArrived?: string[];
    replaySteps?: boolean;
    replayed?: Set<string>;
  } = {},
): Promise<ServeProxy> {
  const calls: ServeCall[] = [];
  const awaited = new Set(options.holdUntilArrived ?? []);
  const held: (() => void)[] = [];
  const replayed = options.replayed ?? new Set<string>();
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
      if (
        awaited.size > 0 &&
        call.customerId !== undefined &&
        options.holdUntilArrived?.includes(call.customerId)
      ) {
        held.push(send);
        awaited.delete(call.customerId);
        if (awaited.size === 0) for (const release of held.splice(0)) release();
        return;
      }
      send();
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

/**
 * The checkpointing half of `replaySteps`: put between the app's Inngest client and the engine,
 * it fails every checkpoint POST that carries a step not yet replayed, so the SDK falls back to
 * classic and reports the step in its 206, which the serve proxy (sharing `replayed`) drops. The
 * step thus runs again, as it would if the app died after the side effect, before the checkpoint.
 */
export async function startCheckpointFaults(
  engineUrl: string,
  replayed: Set<string>,
): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(engineUrl);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (req.url?.includes("/async") && req.method === "POST") {
        const { steps } = JSON.parse(body.toString("utf8")) as { steps?: Op[] };
        if ((steps ?? []).some((op) => op.op === "StepRun" && !replayed.has(op.id))) {
          res.writeHead(500, { "content-type": "application/json" }).end('{"error":"dropped by proxy"}');
          return;
        }
      }
      const upstream = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on("error", () => res.writeHead(502).end());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
