import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export interface WebhookReceipt {
  webhookId: string;
  timestamp: string;
  signature: string;
  body: string;
  /** The status the receiver answered. */
  answered: number;
}

/**
 * A shop system's webhook endpoint on 127.0.0.1, port 0: keeps every request as it came, and
 * answers 500 while held (`hold()` / `release()`: a gate the test opens, never a timer).
 */
export async function startWebhookReceiver(): Promise<{
  url: string;
  receipts: WebhookReceipt[];
  hold(): void;
  release(): void;
  /** The receipts that verify with `secret` through the standardwebhooks package, parsed. */
  verified(secret: string): { webhookId: string; payload: { type: string; data: Record<string, unknown> } }[];
  close(): Promise<void>;
}> {
  const receipts: WebhookReceipt[] = [];
  let held = false;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const answered = held ? 500 : 200;
      receipts.push({
        webhookId: String(req.headers["webhook-id"] ?? ""),
        timestamp: String(req.headers["webhook-timestamp"] ?? ""),
        signature: String(req.headers["webhook-signature"] ?? ""),
        body: Buffer.concat(chunks).toString("utf8"),
        answered,
      });
      res.writeHead(answered, { "content-type": "text/plain" }).end(held ? "receiver down" : "ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    receipts,
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
    },
    verified(secret) {
      const verifier = new Webhook(secret);
      const out = [];
      for (const receipt of receipts) {
        try {
          const payload = verifier.verify(receipt.body, {
            "webhook-id": receipt.webhookId,
            "webhook-timestamp": receipt.timestamp,
            "webhook-signature": receipt.signature,
          }) as { type: string; data: Record<string, unknown> };
          out.push({ webhookId: receipt.webhookId, payload });
        } catch {
          // Not signed with this secret: left out.
        }
      }
      return out;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
