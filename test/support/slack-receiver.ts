import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface SlackStandIn {
  url: string;
  /** Every JSON body posted, whatever the answer. */
  bodies: unknown[];
  /** The bodies answered 200 "ok": what reached the channel. */
  accepted: unknown[];
  answerWith(status: number): void;
  /** The next requests get these statuses, in order; then the `answerWith` status again. */
  answerNext(statuses: number[]): void;
  close(): Promise<void>;
}

/** What Slack's incoming webhooks answer (api.slack.com/messaging/webhooks#handling_errors). */
const errorBodies: Record<number, string> = {
  400: "invalid_payload",
  403: "action_prohibited",
  404: "no_service",
  410: "channel_is_archived",
  500: "internal_error",
  503: "service_unavailable",
};

/** Stands in for Slack's incoming-webhook endpoint: records each JSON body, answers "ok" (or a chosen status). */
export async function startSlackStandIn(): Promise<SlackStandIn> {
  const bodies: unknown[] = [];
  const accepted: unknown[] = [];
  const queued: number[] = [];
  let status = 200;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      bodies.push(body);
      const answer = queued.shift() ?? status;
      if (answer === 200) accepted.push(body);
      res
        .writeHead(answer, { "content-type": "text/plain" })
        .end(answer === 200 ? "ok" : (errorBodies[answer] ?? "internal_error"));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/services/T000/B000/secret`,
    bodies,
    accepted,
    answerWith(next) {
      status = next;
    },
    answerNext(statuses) {
      queued.push(...statuses);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
