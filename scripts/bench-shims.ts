/**
 * `npm run bench:shims [-- --rounds 2 --seconds 3 --connections 10 --only <name>,<name>]`: what each
 * shim of src/shims buys on the path it serves, the Stripe webhook's first delivery (every shim
 * is on it: the express entry, the log lines' redaction, the event send with its headers and
 * its Response).
 *
 * Per shim two service processes, one with every shim on (as production runs) and one with that
 * shim switched off (src/shims/switches.ts), plus a control pair of two all-on processes; all on
 * one database, the service built as scripts/bench/webhook-target.ts builds it. Rows are A/B pairs
 * taken one after the other on fresh orders: all on, then that shim off; the next round takes the
 * pair in the other order, so a machine getting busier or quieter during a pair does not favour
 * one side. Each row prints the service's CPU per
 * request; each pair its gain, `1 - on / off` of CPU per first delivery. Last, per shim, the
 * gains of its pairs, their mean and median, and `kept` for a median of 5 % or more (the threshold of
 * docs/decisions/0030), `drop` below.
 */
import { fork, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import Stripe from "stripe";
import { migrate } from "../src/db/migrator";
import { createStripeSandbox } from "../src/dev/stripe-sandbox";
import { createStripeClient } from "../src/payments/stripe-client";
import { shims } from "../src/shims";
import type { ShimName } from "../src/shims/switches";
import { createTestDatabase } from "../test/support/database";
import { startEventApiReceiver } from "../test/support/event-api-receiver";
import { authorizedCheckoutEvents } from "./bench/authorized-checkout";
import { benchDatabaseServer } from "./bench/database-server";
import { runLoad, type LoadRequest, type LoadResult } from "./bench/load-generator";
import type { TargetOptions } from "./bench/webhook-target";

const webhookSecret = "whsec_bench_secret_0123456789";
const keepAt = 0.05;

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  if (index < 0) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value <= 0) {
    process.stderr.write(
      `bench:shims: --${name} needs a positive whole number, got ${process.argv[index + 1] ?? "nothing"}\n`,
    );
    process.exit(1);
  }
  return value;
}

function chosenShims(): ShimName[] {
  const index = process.argv.indexOf("--only");
  const all = shims.map((shim) => shim.name);
  if (index < 0) return all;
  const names = (process.argv[index + 1] ?? "").split(",").filter(Boolean);
  const unknown = names.filter((name) => !all.includes(name as ShimName));
  if (names.length === 0 || unknown.length > 0) {
    process.stderr.write(`bench:shims: --only takes names among ${all.join(", ")}; got ${names.join(",")}\n`);
    process.exit(1);
  }
  return names as ShimName[];
}

interface Target {
  child: ChildProcess;
  url: string;
  cpuMs(): Promise<number>;
}

function startTarget(options: TargetOptions): Promise<Target> {
  const child = fork(path.join(__dirname, "bench", "webhook-target.ts"), [JSON.stringify(options)], {
    execArgv: ["--import", "tsx"],
  });
  const cpuMs = () =>
    new Promise<number>((resolve) => {
      const listener = (answer: unknown) => {
        if (typeof answer !== "object" || answer === null || !("cpu" in answer)) return;
        child.off("message", listener);
        const { cpu } = answer as { cpu: NodeJS.CpuUsage };
        resolve((cpu.user + cpu.system) / 1000);
      };
      child.on("message", listener);
      child.send("cpu");
    });
  return new Promise((resolve, reject) => {
    child.once("message", (urls) => resolve({ child, url: (urls as { service: string }).service, cpuMs }));
    child.once("exit", (code) => reject(new Error(`bench target exited with ${code}`)));
  });
}

async function main(): Promise<void> {
  const rounds = flag("rounds", 2);
  const seconds = flag("seconds", 3);
  const connections = flag("connections", 10);
  const names = chosenShims();
  const logger = pino({ level: "silent" });
  // eslint-disable-next-line no-restricted-properties -- configured like the tests
  const server = await benchDatabaseServer(process.env.TEST_DATABASE_URL);
  // eslint-disable-next-line no-restricted-properties -- createTestDatabase reads it
  process.env.TEST_DATABASE_URL = server.url;
  const database = await createTestDatabase({ migrated: false });
  await migrate(database.url);
  const sandbox = createStripeSandbox({ webhookSecret, logger });
  const stripeApiBase = (await sandbox.listen(0)).url;
  const eventApi = await startEventApiReceiver();
  const options = (shimsOff: ShimName[]): TargetOptions => ({
    databaseUrl: database.url,
    stripeApiBase,
    eventApiUrl: eventApi.url,
    webhookSecret,
    poolSize: 5,
    shimsOff,
  });
  // A pair of processes per shim, one with every shim on and one without that shim, used for the
  // same rows in the same order, so both have the same JIT history (a process measured with less
  // history spends more per request: an earlier version, sharing one all-on process among the
  // pairs, read 35-55 % for every shim). The "control" pair is two all-on processes: what the
  // method reads when there is nothing to find.
  const pairs = new Map<ShimName | "control", { on: Target; off: Target }>();
  for (const name of ["control" as const, ...names]) {
    pairs.set(name, {
      on: await startTarget(options([])),
      off: await startTarget(options(name === "control" ? [] : [name])),
    });
  }

  const stripe = createStripeClient({ secretKey: "sk_test_bench", apiBase: stripeApiBase });
  await database.db.product.create({
    data: { sku: "MUG", name: "Logo mug", unitPrice: 1200, currency: "usd", stockOnHand: 10_000_000 },
  });
  const payloads: string[] = [];
  let next = 0;
  const prepare = async (count: number): Promise<void> => {
    const orders: { id: string; checkoutSessionId: string }[] = [];
    const ids = Array.from({ length: count }, () => randomUUID());
    for (let i = 0; i < ids.length; i += 25) {
      await Promise.all(
        ids.slice(i, i + 25).map(async (orderId) => {
          const { checkoutSessionId, events } = await authorizedCheckoutEvents(stripe, sandbox, orderId);
          for (const event of events) {
            if (event.type === "checkout.session.completed") payloads.push(JSON.stringify(event, null, 2));
          }
          orders.push({ id: orderId, checkoutSessionId });
        }),
      );
    }
    await database.db.order.createMany({
      data: orders.map((o) => ({
        ...o,
        customerId: "cus-bench",
        email: "bench@example.com",
        currency: "usd",
        total: 1200,
      })),
    });
  };
  const firstDelivery = (): LoadRequest | undefined => {
    const payload = payloads[next++];
    return payload === undefined
      ? undefined
      : {
          path: "/api/stripe/webhook",
          headers: {
            "content-type": "application/json; charset=utf-8",
            "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret }),
          },
          body: payload,
        };
  };
  let mostUsed = 1500;
  const row = async (label: string, target: Target): Promise<number> => {
    const wanted = Math.ceil(mostUsed * 1.3);
    if (payloads.length - next < wanted) await prepare(wanted - (payloads.length - next));
    const before = await target.cpuMs();
    const result: LoadResult = await runLoad({
      baseUrl: target.url,
      connections,
      warmupMs: 1000,
      durationMs: seconds * 1000,
      next: firstDelivery,
    });
    const cpu = ((await target.cpuMs()) - before) / result.totalRequests;
    mostUsed = Math.max(mostUsed, result.totalRequests);
    const load = os.loadavg()[0] ?? 0;
    process.stdout.write(
      `${label.padEnd(40)} ${result.requestsPerSecond.toFixed(0).padStart(5)} req/s  ${cpu.toFixed(3)} ms CPU/req  ` +
        `${JSON.stringify(result.statuses)}${result.exhausted ? " (ran out of orders)" : ""}  load ${load.toFixed(1)}\n`,
    );
    return cpu;
  };

  const gains = new Map<ShimName | "control", number[]>([...pairs.keys()].map((name) => [name, []]));
  try {
    process.stdout.write(
      `${connections} connections, 1 s warm-up, ${seconds} s per row, ${rounds} round(s); CPU of the service process per first delivery\n\n`,
    );
    for (const [name, pair] of pairs) {
      await row(`warm-up, ${name}: all on (not counted)`, pair.on);
      await row(`warm-up, ${name}: without (not counted)`, pair.off);
    }
    for (let round = 1; round <= rounds; round++) {
      for (const [name, pair] of pairs) {
        const onFirst = round % 2 === 1;
        const offLabel = name === "control" ? "control: all on, second process" : `without ${name}`;
        const first = await row(onFirst ? `${name}: all on` : offLabel, onFirst ? pair.on : pair.off);
        const second = await row(onFirst ? offLabel : `${name}: all on`, onFirst ? pair.off : pair.on);
        const [on, off] = onFirst ? [first, second] : [second, first];
        const gain = 1 - on / off;
        gains.get(name)?.push(gain);
        process.stdout.write(`  pair ${round}, ${name}: gain ${(gain * 100).toFixed(1)} %\n`);
      }
    }
    const placed = eventApi.accepted.filter((e) => e.name === "shop/order.placed").length;
    const announced = await database.db.order.count({ where: { placedEventSentAt: { not: null } } });
    process.stdout.write(
      `\nexactly once: ${next} first deliveries sent, ${announced} orders announced, ${placed} shop/order.placed accepted\n\n`,
    );
    for (const [name, values] of gains) {
      const mean = values.reduce((a, b) => a + b, 0) / values.length;
      // The median decides: one pair disturbed by a neighbour's burst moves the mean, not it.
      const sorted = [...values].sort((x, y) => x - y);
      const middle = Math.floor(sorted.length / 2);
      const median =
        sorted.length % 2 === 1
          ? (sorted[middle] as number)
          : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
      process.stdout.write(
        `${name.padEnd(28)} gains ${values.map((g) => `${(g * 100).toFixed(1)} %`).join(", ")}; mean ${(mean * 100).toFixed(1)} %, median ${(median * 100).toFixed(1)} %` +
          `${name === "control" ? " (the method's own error)" : median >= keepAt ? " -> kept" : " -> drop"}\n`,
      );
    }
  } finally {
    for (const pair of pairs.values()) for (const target of [pair.on, pair.off]) target.child.disconnect();
    await sandbox.close();
    await eventApi.close();
    await database.drop();
    await server.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:shims failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
