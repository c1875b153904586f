/**
 * Throughput of the local engine with its app in the same process (as `npm start` runs it):
 * N events, each starting a run of STEPS sequential steps. Run with
 *   npx tsx test/dev/inngest-engine/bench/throughput.ts [events=2000] [steps=8] [rate=0]
 * rate > 0 sends that many events per second; 0 sends as fast as the event API accepts.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { Inngest } from "inngest";
import { serve } from "inngest/express";
import pino from "pino";
import { createLocalEngine } from "../../../../src/dev/inngest-engine";
import { createTestDatabase } from "../../../support/database";

async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 2000);
  const steps = Number(process.argv[3] ?? 8);
  const rate = Number(process.argv[4] ?? 0);
  const logger = pino({ level: "warn" });
  const db = await createTestDatabase({ migrated: false });
  const engine = createLocalEngine({ databaseUrl: db.url, logger });
  const { url: engineUrl } = await engine.listen(0);

  const inngest = new Inngest({ id: "bench", isDev: true, baseUrl: engineUrl, logger: pino({ level: "silent" }) });
  const finishedAt = new Map<string, number>();
  const fn = inngest.createFunction({ id: "order", triggers: [{ event: "bench/order" }] }, async ({ event, step }) => {
    let state = { orderId: (event.data as { orderId: string }).orderId, n: 0 };
    for (let i = 0; i < steps; i++) state = await step.run(`step-${i}`, () => ({ ...state, n: state.n + 1 }));
    finishedAt.set(state.orderId, Date.now());
    return state;
  });
  const app = express();
  app.use(express.json({ limit: "10mb" }));
  app.use("/api/inngest", serve({ client: inngest, functions: [fn] }));
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  await engine.sync(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/inngest`);

  const sentAt = new Map<string, number>();
  const started = Date.now();
  const batch = 20;
  for (let i = 0; i < total; i += batch) {
    const events = Array.from({ length: Math.min(batch, total - i) }, (_, j) => ({ name: "bench/order", data: { orderId: `o-${i + j}` } }));
    const now = Date.now();
    for (const e of events) sentAt.set(e.data.orderId, now);
    await inngest.send(events);
    if (rate > 0) {
      const due = started + ((i + batch) / rate) * 1000;
      if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
    }
  }
  const sentIn = Date.now() - started;
  while (finishedAt.size < total) await new Promise((resolve) => setTimeout(resolve, 20));
  await engine.drain();
  const elapsed = Date.now() - started;
  const latencies = [...finishedAt].map(([id, at]) => at - (sentAt.get(id) ?? at)).sort((a, b) => a - b);
  const pct = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
  console.log(
    JSON.stringify({
      runs: total,
      stepsPerRun: steps,
      sentInMs: sentIn,
      elapsedMs: elapsed,
      runsPerSecond: Math.round((total / elapsed) * 1000),
      stepsPerSecond: Math.round(((total * steps) / elapsed) * 1000),
      latencyMs: { p50: pct(50), p95: pct(95), p99: pct(99), max: latencies.at(-1) },
    }),
  );
  await engine.close();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  await db.drop();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
