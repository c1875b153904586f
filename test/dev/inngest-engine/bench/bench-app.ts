/**
 * The benchmark's Inngest app: STEPS sequential steps per run. Started in-process by
 * throughput.ts, or as its own process (`--split`) to see the engine's and the app's CPU apart.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { Inngest } from "inngest";
import { serve } from "inngest/express";
import pino from "pino";

export async function startBenchApp(options: {
  engineUrl: string;
  steps: number;
  onFinished?: (orderId: string) => void;
}): Promise<{ url: string; close(): Promise<void> }> {
  const inngest = new Inngest({
    id: "bench",
    isDev: true,
    baseUrl: options.engineUrl,
    logger: pino({ level: "silent" }),
  });
  const fn = inngest.createFunction(
    { id: "order", triggers: [{ event: "bench/order" }] },
    async ({ event, step }) => {
      let state = { orderId: (event.data as { orderId: string }).orderId, n: 0 };
      for (let i = 0; i < options.steps; i++)
        state = await step.run(`step-${i}`, () => ({ ...state, n: state.n + 1 }));
      options.onFinished?.(state.orderId);
      return state;
    },
  );
  const app = express();
  app.use(express.json({ limit: "10mb" }));
  app.use("/api/inngest", serve({ client: inngest, functions: [fn] }));
  app.get("/cpu", (_req, res) => {
    res.json(process.cpuUsage());
  });
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/inngest`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

if (require.main === module) {
  const [engineUrl = "", steps = "8"] = process.argv.slice(2);
  void startBenchApp({ engineUrl, steps: Number(steps) }).then((app) => {
    process.send?.({ url: app.url });
  });
}
