/**
 * The system under test for `npm run bench:webhook`, in a process of its own: the bare raw-body
 * route (the ceiling) and the real service app (buildApp with the Stripe intake), each on its
 * own port. Started by scripts/bench-webhook.ts, which sends its ports back over IPC.
 */
import { writeFile } from "node:fs/promises";
import type { Server } from "node:http";
import { Session } from "node:inspector/promises";
import type { AddressInfo } from "node:net";
import express from "express";
import pino from "pino";
import { buildApp } from "../../src/app";
import { parseConfig } from "../../src/config";
import { createDatabase } from "../../src/db/client";
import { createDatabaseReadiness } from "../../src/health/readiness";
import { createInngestClient } from "../../src/inngest/client";
import { createInngestPublisher } from "../../src/events/publisher";
import { createPrismaInventoryRepository } from "../../src/inventory/prisma-inventory-repository";
import { createLogAlerter } from "../../src/alerts";
import { createLogger } from "../../src/logger";
import { createMetrics, workflowObservability } from "../../src/metrics";
import { createOrderIntake } from "../../src/orders/order-intake";
import { createStripeClient } from "../../src/payments/stripe-client";
import { switchShimsOffForMeasurement, type ShimName } from "../../src/shims/switches";
import { startReference } from "./webhook-reference";

export interface TargetOptions {
  databaseUrl: string;
  stripeApiBase: string;
  eventApiUrl: string;
  webhookSecret: string;
  /** Prisma's connection pool; the service's default is 10. */
  poolSize: number;
  /** scripts/bench-shims.ts: shims switched off in this process, to measure what each buys. */
  shimsOff?: ShimName[];
  /** The webhook's start-up warm-up (src/orders/intake/warm-up.ts); on unless false. */
  warmUp?: boolean;
}

const listen = (app: express.Express): Promise<string> =>
  new Promise((resolve) => {
    const server: Server = app.listen(0, "127.0.0.1", () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    );
  });

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] as string) as TargetOptions;
  // Production runs compiled JavaScript without source maps (`node dist/server.js`); tsx turns
  // them on, which made every stack trace a library captures (stripe-node takes one per request)
  // several times dearer here than in production. Off, as in production, for ours and the reference.
  process.setSourceMapsEnabled(false);
  switchShimsOffForMeasurement(options.shimsOff ?? []);

  const bare = express();
  bare.post("/raw", express.raw({ type: () => true, limit: "1mb" }), (req, res) => {
    res.json({ received: Buffer.isBuffer(req.body) ? req.body.length : 0 });
  });

  // As the service logs (src/logger.ts: its redaction, serializers and context mixin, at info),
  // into /dev/null; and with its metrics and its Inngest middleware, as src/wiring.ts builds them.
  const logger = createLogger({
    level: "info",
    destination: pino.destination({ dest: "/dev/null", sync: false }),
  });
  const metrics = createMetrics();
  const db = createDatabase(options.databaseUrl, { maxConnections: options.poolSize });
  const stripe = createStripeClient({ secretKey: "sk_test_bench", apiBase: options.stripeApiBase });
  const inngest = createInngestClient(parseConfig({ NODE_ENV: "test" }), {
    localEngineUrl: options.eventApiUrl,
    logger,
    middleware: [workflowObservability({ metrics, logger })],
  });
  const intake = createOrderIntake({
    db,
    stripe,
    inventory: createPrismaInventoryRepository(db),
    publisher: createInngestPublisher(inngest),
    logger,
    alerts: createLogAlerter({ runUrlTemplate: "", logger }),
    webhookSecret: options.webhookSecret,
    captureMethod: "manual",
    publicUrl: "http://shop.bench",
    metrics,
    onTransition: (to) => metrics.observeOrderTransition(to),
  });
  const service = buildApp({
    logger,
    readiness: await createDatabaseReadiness(db),
    stripeWebhook: intake.stripeWebhook,
    checkout: intake.checkout,
  });

  // As src/server.ts does before it serves (TargetOptions.warmUp false: the run before it).
  if (options.warmUp !== false) await intake.stripeWebhook.warmUp();
  const urls = {
    bare: await listen(bare),
    service: await listen(service),
    // Same process and database, the thinnest stack doing the same I/O.
    reference: (await startReference(options)).url,
  };
  process.send?.(urls);
  // --cpu-prof: the bench profiles one row at a time (the inspector's CPU profiler), so a
  // profile shows one handler's work, not the whole run's.
  let profiler: Session | undefined;
  process.on("message", (message) => {
    if (message === "cpu") process.send?.({ cpu: process.cpuUsage() });
    const profile = message as { profile?: "start" | "stop"; file?: string };
    if (profile.profile === "start") {
      profiler = new Session();
      profiler.connect();
      void profiler
        .post("Profiler.enable")
        .then(() => profiler?.post("Profiler.setSamplingInterval", { interval: 200 }))
        .then(() => profiler?.post("Profiler.start"))
        .then(() => process.send?.({ profiling: true }));
    }
    if (profile.profile === "stop" && profiler && profile.file) {
      const session = profiler;
      const file = profile.file;
      profiler = undefined;
      void session
        .post("Profiler.stop")
        .then(({ profile: result }) => writeFile(file, JSON.stringify(result)))
        .then(() => session.disconnect())
        .then(() => process.send?.({ profiled: file }));
    }
  });
  process.on("disconnect", () => process.exit(0));
}

main().catch((error: unknown) => {
  process.stderr.write(`bench target failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
