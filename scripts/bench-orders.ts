/**
 * `npm run bench:orders [-- --orders 200 --database-url postgresql://... --apps 1]` (default: an
 * embedded PostgreSQL started for the run)
 *
 * Orders fulfilled per second, end to end: checkout through our API, the customer completing it
 * in the Stripe stand-in, the signed webhook, shop/order.placed, and every fulfil-order step
 * driven by the local engine over HTTP against serve(), until each order is `completed`. The app
 * (`src/server.ts`) and the engine each run in a process of their own, so their CPU time is read
 * apart; the driver, the Stripe stand-in and the SMTP sink run here. The engine's clock runs a
 * billion times faster so the 14-day wait and 3-day sleep are skipped. Every order has its own
 * customer, so the per-customer concurrency limit does not serialise them.
 *
 * Both engine modes run in one invocation, one after the other on fresh databases: classic
 * (LOCAL_ENGINE_CHECKPOINTING=false) and checkpointing (the default, as on Inngest). The last
 * line is `orders/s: <n>` for the default mode.
 */
import { spawn, type ChildProcess } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { parseArgs } from "node:util";
import { Client } from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { SMTPServer } from "smtp-server";
import { migrate } from "../src/db/migrator";
import { benchDatabaseServer } from "./bench/database-server";
import { createStripeSandbox } from "../src/dev/stripe-sandbox";
import { PrismaClient } from "../src/generated/prisma/client";
import { createLogger } from "../src/logger";

const { values: args } = parseArgs({
  options: {
    orders: { type: "string", default: "200" },
    "database-url": { type: "string" },
    // Checkouts at a time; above the app's pool (10) Prisma times out starting transactions (issue 14).
    concurrency: { type: "string", default: "10" },
    // A folder: the app process runs with `node --cpu-prof` and writes one .cpuprofile per mode there.
    "cpu-prof": { type: "string" },
  },
});
const orderCount = Number(args.orders);
const checkoutConcurrency = Number(args.concurrency);
if (
  !Number.isInteger(orderCount) ||
  orderCount < 1 ||
  !Number.isInteger(checkoutConcurrency) ||
  checkoutConcurrency < 1
) {
  process.stderr.write("bench:orders: --orders and --concurrency take positive whole numbers\n");
  process.exit(2);
}

const root = path.resolve(__dirname, "..");
const webhookSecret = "whsec_bench_secret";

async function withAdmin<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function startSmtpSink(): Promise<{ url: string; close(): Promise<void>; received: () => number }> {
  let received = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, _session, callback) {
      stream.on("data", () => undefined);
      stream.on("end", () => {
        received += 1;
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received: () => received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

async function pool<T>(items: T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A child process spoken to over IPC: one request, one typed answer. */
class Child {
  private readonly waiters: ((message: Record<string, unknown>) => void)[] = [];
  output = "";

  constructor(readonly process: ChildProcess) {
    process.on("message", (message: Record<string, unknown>) => this.waiters.shift()?.(message));
    process.stdout?.on("data", (chunk: Buffer) => (this.output += chunk.toString()));
    process.stderr?.on("data", (chunk: Buffer) => (this.output += chunk.toString()));
  }

  next(): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`child exited (${code}):\n${this.output}`));
      this.process.once("exit", onExit);
      this.waiters.push((message) => {
        this.process.off("exit", onExit);
        resolve(message);
      });
    });
  }

  async ask(message: Record<string, unknown>): Promise<Record<string, unknown>> {
    const answer = this.next();
    this.process.send(message);
    return answer;
  }
}

function spawnNode(args: string[], env?: Record<string, string>): Child {
  return new Child(
    spawn(process.execPath, args, {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe", "ipc"],
      // eslint-disable-next-line no-restricted-properties -- the child needs PATH to find node
      env: env ? { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env } : undefined,
    }),
  );
}

interface Figures {
  mode: string;
  seconds: number;
  ordersPerSecond: number;
  serveCalls: number;
  checkpoints: number;
  engineStatements: number;
  appStatements: number;
  appCpuMs: number;
  engineCpuMs: number;
  emails: number;
}

async function runMode(adminUrl: string, checkpointing: boolean): Promise<Figures> {
  const dbName = `of_bench_${Date.now()}`;
  await withAdmin(adminUrl, (c) => c.query(`CREATE DATABASE "${dbName}"`));
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  const databaseUrl = url.toString();
  await migrate(databaseUrl);
  const db = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  await db.product.create({
    data: {
      sku: "BENCH-1",
      name: "Bench item",
      unitPrice: 1000,
      currency: "usd",
      stockOnHand: orderCount * 2,
    },
  });

  const logger = createLogger({ level: "warn" });
  const smtp = await startSmtpSink();
  const sandbox = createStripeSandbox({ webhookSecret, logger });
  const stripeUrl = (await sandbox.listen(0, "127.0.0.1")).url;

  const children: Child[] = [];
  try {
    const engine = spawnNode([
      "--import",
      "tsx",
      "scripts/bench/engine-process.ts",
      JSON.stringify({ databaseUrl, checkpointing, timeScale: 1e9 }),
    ]);
    children.push(engine);
    const ready = await engine.next();
    const engineUrl = String(ready.url);

    const port = await freePort();
    const profile = args["cpu-prof"]
      ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(args["cpu-prof"])}`]
      : [];
    const appArgs = ["--import", "tsx", "--import", "./scripts/bench/app-probe.ts", "src/server.ts"];
    const app = spawnNode([...profile, ...appArgs], {
      NODE_ENV: "test",
      LOG_LEVEL: "warn",
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: databaseUrl,
      STRIPE_SECRET_KEY: "sk_test_bench",
      STRIPE_API_BASE: stripeUrl,
      STRIPE_WEBHOOK_SECRET: webhookSecret,
      INNGEST_DEV: engineUrl,
      SMTP_URL: smtp.url,
      ADMIN_API_TOKEN: "bench-admin-token-0123456789",
      CARRIER_WEBHOOK_SECRET: "bench-carrier-secret-0123456789",
      PUBLIC_URL: "http://shop.test",
      // Orders here have no checkout address: the built-in sandbox carrier books them.
      SHIPPING_CARRIER: "sandbox",
    });
    children.push(app);
    const appUrl = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      const up = await fetch(`${appUrl}/healthz`).then(
        (res) => res.status < 500,
        () => false,
      );
      if (up) break;
      if (i > 600 || app.process.exitCode !== null) throw new Error(`the app did not start:\n${app.output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    sandbox.setWebhookUrl(`${appUrl}/api/stripe/webhook`);
    await engine.ask({ type: "sync", url: `${appUrl}/api/inngest` });

    const engineBefore = await engine.ask({ type: "stats" });
    const appBefore = await app.ask({ type: "stats" });
    const started = performance.now();
    await pool(
      Array.from({ length: orderCount }, (_, i) => i),
      checkoutConcurrency,
      async (i) => {
        const res = await fetch(`${appUrl}/api/checkout`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            customerId: `cus_bench_${i}`,
            email: `buyer${i}@example.com`,
            items: [{ sku: "BENCH-1", quantity: 1 }],
          }),
        });
        if (res.status !== 201)
          throw new Error(`checkout answered ${res.status}: ${await res.text()}\n${app.output.slice(-3000)}`);
        const { checkoutSessionId } = (await res.json()) as { checkoutSessionId: string };
        await sandbox.completeCheckoutSession(checkoutSessionId, "authorized");
      },
    );
    for (;;) {
      const completed = await db.order.count({ where: { status: "completed" } });
      const failed = await db.order.count({ where: { status: { in: ["payment_failed", "cancelled"] } } });
      if (failed > 0) throw new Error(`${failed} orders failed during the benchmark`);
      if (completed === orderCount) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const seconds = (performance.now() - started) / 1000;
    const engineAfter = await engine.ask({ type: "stats" });
    const appAfter = await app.ask({ type: "stats" });
    const stat = (m: Record<string, unknown>, key: string): number =>
      Number((m.stats as Record<string, number>)[key]);

    const figures: Figures = {
      mode: checkpointing ? "checkpointing" : "classic",
      seconds,
      ordersPerSecond: orderCount / seconds,
      serveCalls: (stat(engineAfter, "calls") - stat(engineBefore, "calls")) / orderCount,
      checkpoints: (stat(engineAfter, "checkpoints") - stat(engineBefore, "checkpoints")) / orderCount,
      engineStatements: (stat(engineAfter, "statements") - stat(engineBefore, "statements")) / orderCount,
      appStatements: (Number(appAfter.statements) - Number(appBefore.statements)) / orderCount,
      appCpuMs: (Number(appAfter.cpuMs) - Number(appBefore.cpuMs)) / orderCount,
      engineCpuMs: (Number(engineAfter.cpuMs) - Number(engineBefore.cpuMs)) / orderCount,
      emails: smtp.received(),
    };
    await engine.ask({ type: "close" }).catch(() => undefined);
    if (profile.length > 0) {
      // --cpu-prof writes its file only on a normal exit: let the app shut down on SIGTERM.
      const exited = new Promise((resolve) => app.process.once("exit", resolve));
      app.process.kill("SIGTERM");
      await exited;
    }
    return figures;
  } finally {
    for (const child of children) if (child.process.exitCode === null) child.process.kill("SIGKILL");
    await db.$disconnect();
    await sandbox.close();
    await smtp.close();
    await withAdmin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`));
  }
}

async function main(): Promise<void> {
  const databaseServer = await benchDatabaseServer(args["database-url"]);
  stopDatabaseServer = databaseServer.stop;
  const adminUrl = databaseServer.url;
  const classic = await runMode(adminUrl, false);
  const checkpointing = await runMode(adminUrl, true);
  const row = (label: string, value: (f: Figures) => string) =>
    `${label.padEnd(34)}${value(classic).padStart(12)}${value(checkpointing).padStart(16)}`;
  const lines = [
    `orders: ${orderCount} (one customer each, ${checkoutConcurrency} checkouts at a time), 1 app process`,
    row("", (f) => f.mode),
    row("all orders completed (s)", (f) => f.seconds.toFixed(2)),
    row("orders/s", (f) => f.ordersPerSecond.toFixed(1)),
    row("serve() calls / order", (f) => f.serveCalls.toFixed(1)),
    row("checkpoint POSTs / order", (f) => f.checkpoints.toFixed(1)),
    row("SQL statements / order: app", (f) => f.appStatements.toFixed(1)),
    row("SQL statements / order: engine", (f) => f.engineStatements.toFixed(1)),
    row("CPU ms / order: app", (f) => f.appCpuMs.toFixed(1)),
    row("CPU ms / order: engine", (f) => f.engineCpuMs.toFixed(1)),
    row("CPU ms / order: app + engine", (f) => (f.appCpuMs + f.engineCpuMs).toFixed(1)),
    row("e-mails sent", (f) => String(f.emails)),
    `orders/s: ${checkpointing.ordersPerSecond.toFixed(1)}`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

let stopDatabaseServer: () => Promise<void> = async () => undefined;

main()
  .finally(() => stopDatabaseServer())
  .then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`bench:orders failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
