import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface SlackStandIn {
  url: string;
  bodies: unknown[];
  answerWith(status: number): void;
  close(): Promise<void>;
}

/** Stands in for Slack's incoming-webhook endpoint: records each JSON body, answers "ok" (or a chosen status). */
export async function startSlackStandIn(): Promise<SlackStandIn> {
  const bodies: unknown[] = [];
  let status = 200;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      res.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "ok" : "internal_error");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/services/T000/B000/secret`,
    bodies,
    answerWith(next) {
      status = next;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
