/**
 * The floor reference of `npm run bench:orders`: what the Inngest SDK alone costs for an order's
 * worth of steps. One minimal Inngest function with the same sequence of steps as a real
 * fulfil-order run (the bench reads it from the engine after the app's run: each `step.run` here
 * does one SQL statement and nothing else; the waits and sleeps are the same ops), served as the
 * app serves its functions: the compiled client of src/inngest/client.ts (same SDK version, the
 * same options: checkpointing, the keep-alive fetch, the cached headers), serve() from
 * inngest/express behind src/http/inngest-endpoint.ts on express, one pg pool of the app's size.
 * Started with app-probe.js preloaded, as the app is, so its CPU and statements are read alike.
 * Plain CommonJS over dist/, so no TypeScript loader runs beside it (the app runs dist/ too).
 *
 * argv[2]: JSON { port, databaseUrl, engineUrl, shape: ("run" | "wait" | "sleep")[] }.
 */
const path = require("node:path");
const express = require("express");
const { serve } = require("inngest/express");
const pg = require("pg");

const dist = path.resolve(__dirname, "..", "..", "dist");
const { parseConfig } = require(path.join(dist, "config"));
const { createInngestClient } = require(path.join(dist, "inngest", "client"));
const { inngestEndpoint } = require(path.join(dist, "http", "inngest-endpoint"));
const { createLogger } = require(path.join(dist, "logger"));

const options = JSON.parse(process.argv[2]);
const logger = createLogger({ level: "warn" });
const config = parseConfig({ NODE_ENV: "test", INNGEST_DEV: options.engineUrl });
const inngest = createInngestClient(config, { logger });
const db = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });

const floor = inngest.createFunction(
  { id: "floor-order", triggers: [{ event: "bench/floor.order" }], retries: 5 },
  async ({ event, step }) => {
    const key = event.data.key;
    let n = 0;
    for (const op of options.shape) {
      n += 1;
      if (op === "wait") {
        await step.waitForEvent(`wait-${n}`, { event: "bench/floor.never", timeout: "14d" });
      } else if (op === "sleep") {
        await step.sleep(`sleep-${n}`, "3d");
      } else {
        const stepNo = n;
        // One statement, idempotent by (key, step), as each of the app's steps is by its key.
        await step.run(`step-${stepNo}`, async () => {
          await db.query("INSERT INTO bench_floor_steps (key, step) VALUES ($1, $2) ON CONFLICT DO NOTHING", [
            key,
            stepNo,
          ]);
          return stepNo;
        });
      }
    }
    return { key };
  },
);

const app = express();
app.disable("x-powered-by");
app.use(
  "/api/inngest",
  inngestEndpoint({
    serve: serve({ client: inngest, functions: [floor] }),
    signaturesRequired: inngest.mode === "cloud",
    originPinned: false,
    logger,
  }),
);
const server = app.listen(options.port, "127.0.0.1", () => process.send({ type: "ready" }));
process.on("disconnect", () => server.close(() => db.end().then(() => process.exit(0))));
