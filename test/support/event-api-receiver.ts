import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedEvent {
  name: string;
  id?: string;
  data: Record<string, unknown>;
  ts?: number;
}

const dedupeWindowMs = 24 * 60 * 60 * 1000;

/**
 * Inngest's event API as the SDK sees it (`POST /e/:key` with a JSON array, answered with
 * `{ ids, status: 200 }`), counting what arrives. Like Inngest it drops an event whose `id` it
 * accepted in the last 24 hours, on a clock tests can move forward. `down` answers 500s.
 */
export interface EventApiReceiver {
  url: string;
  /** Every event in every request, duplicates included. */
  received: ReceivedEvent[];
  /** Events that Inngest would have turned into runs (first of their id within 24 hours). */
  accepted: ReceivedEvent[];
  requests: number;
  down: boolean;
  advance(ms: number): void;
  close(): Promise<void>;
}

export async function startEventApiReceiver(): Promise<EventApiReceiver> {
  let offsetMs = 0;
  const acceptedAt = new Map<string, number>();
  const state = {
    received: [] as ReceivedEvent[],
    accepted: [] as ReceivedEvent[],
    requests: 0,
    down: false,
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      state.requests += 1;
      if (req.method !== "POST" || !req.url?.startsWith("/e/")) {
        res
          .writeHead(404, { "content-type": "application/json" })
          .end(JSON.stringify({ error: "not found", status: 404 }));
        return;
      }
      if (state.down) {
        res
          .writeHead(500, { "content-type": "application/json" })
          .end(JSON.stringify({ error: "event API down (test)", status: 500 }));
        return;
      }
      const parsed = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ReceivedEvent | ReceivedEvent[];
      const events = Array.isArray(parsed) ? parsed : [parsed];
      const now = Date.now() + offsetMs;
      const ids = events.map((event, i) => {
        state.received.push(event);
        const seen = event.id === undefined ? undefined : acceptedAt.get(event.id);
        if (seen === undefined || now - seen >= dedupeWindowMs) {
          if (event.id !== undefined) acceptedAt.set(event.id, now);
          state.accepted.push(event);
        }
        return event.id ?? `evt-${state.received.length}-${i}`;
      });
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ids, status: 200 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    advance(ms: number) {
      offsetMs += ms;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
