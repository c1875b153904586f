/**
 * `npm run demo`: the whole service on embedded defaults (embedded PostgreSQL, the Stripe stand-in, the local
 * Inngest engine, e-mails to an outbox), four customers checking out, the clock fast-forwarded,
 * and each order's timeline printed. Nothing to configure; state goes to a temporary folder, which
 * is kept (with the e-mails) so `DATA_DIR=<folder> npm start` can show it at /dev/outbox and /ops.
 */
import http from "node:http";
import { mkdtemp } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { buildApp } from "../src/app";
import { parseConfig } from "../src/config";
import { migrate } from "../src/db/migrator";
import { seedDemoCatalogIfEmpty } from "../src/db/seed";
import { startStandIns } from "../src/dev/stand-ins";
import { createLogger } from "../src/logger";
import { createServices } from "../src/wiring";

const day = 24 * 3600 * 1000;

interface Timeline {
  id: string;
  status: string;
  customerId: string;
  total: number;
  timeline: { kind: string; at: string; detail: Record<string, unknown> }[];
}

/** A free port, chosen before start: the links in pages and e-mails must name it. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "order-fulfillment-demo-"));
  const port = await freePort();
  const config = parseConfig({
    DATA_DIR: dataDir,
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    STRIPE_SANDBOX_PORT: "0",
    EASYPOST_SANDBOX_PORT: "0",
    LOCAL_ENGINE_PORT: "0",
    LOG_LEVEL: "warn",
  });
  // The log is kept aside, not printed into the story: carol's failure is expected, and its ops
  // alert (which goes to the log without Slack) is told at the end.
  const logLines: string[] = [];
  const logger = createLogger({
    level: config.LOG_LEVEL,
    destination: { write: (line: string) => void logLines.push(line) },
  });
  const say = (line: string) => process.stdout.write(`${line}\n`);

  say(`Starting on embedded defaults (state in ${dataDir}) ...`);
  const standIns = await startStandIns(config, logger);
  const { localEngine: engine, stripeSandbox: stripe } = standIns;
  if (!engine || !stripe) throw new Error("the demo needs the embedded engine and Stripe stand-in");
  await migrate(standIns.endpoints.databaseUrl);
  const services = await createServices({ config, logger, endpoints: standIns.endpoints });
  await seedDemoCatalogIfEmpty(services.db);
  const server = http.createServer(buildApp(services));
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const appUrl = `http://127.0.0.1:${port}`;
  await standIns.attachApp(appUrl);
  const admin = { authorization: `Bearer ${standIns.endpoints.adminToken}` };

  const checkout = async (customerId: string, items: { sku: string; quantity: number }[]) => {
    const res = await fetch(`${appUrl}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ customerId, email: `${customerId}@example.com`, items }),
    });
    if (res.status !== 201) throw new Error(`checkout failed: ${res.status} ${await res.text()}`);
    return (await res.json()) as { orderId: string; checkoutSessionId: string };
  };

  say("Four customers check out:");
  const alice = await checkout("alice", [{ sku: "TSHIRT-BLK-M", quantity: 2 }]);
  const bob = await checkout("bob", [{ sku: "MUG-LOGO", quantity: 1 }]);
  const carol = await checkout("carol", [{ sku: "HOODIE-GRY-L", quantity: 1 }]);
  const dave = await checkout("dave", [{ sku: "STICKER-PACK", quantity: 3 }]);

  say("  alice and bob pay; carol's bank declines when we capture; dave's card is declined at checkout");
  await stripe.completeCheckoutSession(alice.checkoutSessionId, "authorized");
  await stripe.completeCheckoutSession(bob.checkoutSessionId, "authorized");
  await engine.drain();
  stripe.injectFailure("payment_intents.capture", { kind: "decline", code: "card_declined" });
  await stripe.completeCheckoutSession(carol.checkoutSessionId, "authorized");
  await stripe.completeCheckoutSession(dave.checkoutSessionId, "declined");
  await engine.drain();

  const details = async (orderId: string) =>
    (await (await fetch(`${appUrl}/api/orders/${orderId}`, { headers: admin })).json()) as Timeline & {
      shipment: { trackingNumber: string } | null;
    };

  say("The carrier reports alice's parcel delivered; bob's never reports back.");
  const aliceOrder = await details(alice.orderId);
  if (aliceOrder.shipment && standIns.easyPostSandbox) {
    // The EasyPost stand-in scans the parcel and POSTs the signed tracker.updated event.
    await standIns.easyPostSandbox.advanceTracker(aliceOrder.shipment.trackingNumber, "delivered");
  }
  await engine.drain();

  say("Fast-forwarding the clock: 3 days (alice's review request), then 14 days (bob's, at the timeout).");
  await engine.clock.advance(3 * day);
  await engine.clock.advance(11 * day + 60_000);
  await engine.drain();

  for (const [name, order] of [
    ["alice", alice],
    ["bob", bob],
    ["carol", carol],
    ["dave", dave],
  ] as const) {
    const view = await details(order.orderId);
    say(`\n${name}  order ${view.id}  ${view.status}`);
    for (const entry of view.timeline) {
      const detail = Object.entries(entry.detail)
        .filter(([key]) =>
          [
            "reason",
            "trackingNumber",
            "amountCaptured",
            "outcome",
            "sku",
            "settlement",
            "step",
            "declineCode",
          ].includes(key),
        )
        .map(([key, value]) => `${key}=${typeof value === "object" ? JSON.stringify(value) : String(value)}`)
        .join(" ");
      say(`  ${entry.at.slice(11, 19)}  ${entry.kind.padEnd(26)} ${detail}`);
    }
  }
  const alerts = logLines
    .map((line) => JSON.parse(line) as { msg?: string; alert?: { runUrl?: string; orderUrl?: string } })
    .filter((line) => line.msg?.startsWith("ALERT"));
  say(`\nOps alerts (without SLACK_WEBHOOK_URL they go to the log): ${alerts.length}`);
  for (const alert of alerts)
    say(`  ${alert.msg}\n    order: ${alert.alert?.orderUrl}\n    run:   ${alert.alert?.runUrl}`);
  const otherProblems = logLines.filter((line) => /"level":(50|60)/.test(line) && !line.includes('"ALERT'));
  say(`Other error lines in the log: ${otherProblems.length} (carol's declined capture, as expected).`);
  say(`\nE-mails are in ${path.join(dataDir, "outbox")}. To browse them and the orders:`);
  say(`  DATA_DIR=${dataDir} PORT=${port} npm start   # then open ${appUrl}/dev/outbox and ${appUrl}/ops`);

  await engine.drain();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await services.close();
  await standIns.stop();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`demo failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
