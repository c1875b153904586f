import express from "express";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Inngest } from "inngest";
import { serve } from "inngest/express";
import { lifecycleEvents } from "../../src/events/lifecycle";

export interface ReceivedLifecycleEvent {
  id: string;
  name: string;
  orderId: string | undefined;
}

/**
 * A shop's own Inngest app, as docs/lifecycle-events.md shows one: its own client id and serve
 * endpoint, one function per lifecycle event that counts what it receives. The tests register it on
 * the engine beside ours (`sync`) and count each event of an order.
 */
export async function startShopLifecycleApp(options: {
  engineUrl: string;
  sync: (url: string) => Promise<unknown>;
}) {
  const received: ReceivedLifecycleEvent[] = [];
  const shop = new Inngest({ id: "the-shop", isDev: true, baseUrl: options.engineUrl });
  const functions = Object.keys(lifecycleEvents).map((name) =>
    shop.createFunction(
      { id: `count-${name.replace(/[^a-z0-9]+/g, "-")}`, triggers: [{ event: name }] },
      ({ event }) => {
        const data = event.data as { orderId?: string };
        received.push({ id: event.id ?? "", name: event.name, orderId: data.orderId });
        return "counted";
      },
    ),
  );
  const app = express();
  app.use(express.json({ limit: "4mb" }));
  app.use("/api/inngest", serve({ client: shop, functions }));
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  await options.sync(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/inngest`);
  return {
    received,
    /** How many of each event the shop's functions received for one order. */
    countsOf(orderId: string): Record<string, number> {
      const counts: Record<string, number> = {};
      for (const event of received.filter((e) => e.orderId === orderId))
        counts[event.name] = (counts[event.name] ?? 0) + 1;
      return counts;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
