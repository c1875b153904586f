/**
 * `npm run bench:orders [-- --orders 200 --app-processes 1,2 --modes classic,checkpointing
 * --cron-interval-ms 60000 --cpu-prof <dir> --database-url postgresql://...]` (default: an embedded
 * PostgreSQL started for the run)
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
 * (LOCAL_ENGINE_CHECKPOINTING=false) and checkpointing (the default, as on Inngest), each with
 * every count of app processes in `--app-processes` (default 1 and 2). With N > 1 the app runs
 * as N processes on one database, as stateless replicas do in production: the engine spreads its
 * serve() calls over them round-robin (what a load balancer in front of them does), and the
 * driver spreads checkouts and the Stripe webhooks likewise. Per-order figures of the app are
 * summed over its processes. Beside them: the load average, how busy the whole machine was, and
 * the CPU of PostgreSQL and of this driver process, so a slow run can be told from a starved one.
 * The last line is `orders/s: <n>` for the default mode (checkpointing), the best of its app-process
 * counts (on two cores a second process adds scheduling and no core, so it may well be the lower).
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
import { coreCount, loadAverage, machineCpuMs, processTreeCpuMs } from "./bench/process-cpu";
import { createEasyPostSandbox } from "../src/dev/easypost-sandbox";
import { createStripeSandbox } from "../src/dev/stripe-sandbox";
import { PrismaClient } from "../src/generated/prisma/client";
import { createLogger } from "../src/logger";

const { values: args } = parseArgs({
  options: {
    orders: { type: "string", default: "200" },
    "database-url": { type: "string" },
    // Checkouts at a time; above the app's pool (10) they queue for a connection (503 past its timeout).
    concurrency: { type: "string", default: "10" },
    // A folder: the app and engine processes run with `node --cpu-prof` and write their profiles
    // in one folder per process and run there (app<i>-<mode>-n<N>/, engine-<mode>-n<N>/).
    "cpu-prof": { type: "string" },
    // App processes behind the engine, one run per count (comma-separated).
    "app-processes": { type: "string", default: "1,2" },
    modes: { type: "string", default: "classic,checkpointing" },
    // At a billion times real time every cron is due at every instant; the engine fires each at
    // most once per this many real ms. Production's most frequent cron (drain-email-outbox)
    // fires once a minute, hence the default: cron runs then cost per order what they cost in
    // production, instead of growing with the run's length (1000, the engine's own default, was
    // this benchmark's setting before 30 Nov 2026: ~5 cron runs per real second).
    "cron-interval-ms": { type: "string", default: "60000" },
  },
});
const orderCount = Number(args.orders);
const checkoutConcurrency = Number(args.concurrency);
const cronIntervalMs = Number(args["cron-interval-ms"]);
const appProcessCounts = args["app-processes"].split(",").map(Number);
const modes = args.modes.split(",");
if (
  !Number.isInteger(orderCount) ||
  orderCount < 1 ||
  !Number.isInteger(checkoutConcurrency) ||
  checkoutConcurrency < 1 ||
  !Number.isInteger(cronIntervalMs) ||
  cronIntervalMs < 0 ||
  !appProcessCounts.every((n) => Number.isInteger(n) && n >= 1)
) {
  process.stderr.write(
    "bench:orders: --orders, --concurrency and --app-processes (comma-separated) take positive whole numbers, --cron-interval-ms a whole number\n",
  );
  process.exit(2);
}
if (modes.length === 0 || !modes.every((mode) => mode === "classic" || mode === "checkpointing")) {
  process.stderr.write("bench:orders: --modes takes classic, checkpointing or both (comma-separated)\n");
  process.exit(2);
}

const root = path.resolve(__dirname, "..");
const webhookSecret = "whsec_bench_secret";
const easyPostWebhookSecret = "bench-easypost-webhook-secret-0123456789";

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
  appProcesses: number;
  seconds: number;
  ordersPerSecond: number;
  serveCalls: number;
  checkpoints: number;
  engineStatements: number;
  appStatements: number;
  appCpuMs: number;
  engineCpuMs: number;
  /** This process: the driver, the Stripe stand-in and the SMTP sink. */
  driverCpuMs: number;
  /** The PostgreSQL server (every database on it); undefined with --database-url. */
  postgresCpuMs: number | undefined;
  /** Runs of functions other than fulfil-order (crons and their follow-ups) during the run. */
  otherRuns: number;
  loadBefore: number;
  loadAfter: number;
  /** Share of all cores busy (every process on the machine) during the run. */
  machineBusy: number | undefined;
  emails: number;
  /** Checkouts answered 503 (busy, retried with the same Idempotency-Key). */
  checkoutRetries: number;
  /** Engine statements per order by name, largest first. */
  engineStatementsByName: [string, number][];
}

/** A checkout's Stripe events, signed as Stripe signs them, POSTed to one app process. */
async function deliverWebhooks(
  sandbox: ReturnType<typeof createStripeSandbox>,
  events: { id: string }[],
  appUrl: string,
): Promise<void> {
  for (const event of events) {
    const { payload, header } = sandbox.signedDelivery(event.id);
    const res = await fetch(`${appUrl}/api/stripe/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8", "stripe-signature": header },
      body: payload,
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`webhook answered ${res.status}: ${text}`);
  }
}

async function runMode(
  database: { url: string; pid?: number },
  checkpointing: boolean,
  appProcesses: number,
): Promise<Figures> {
  const adminUrl = database.url;
  const mode = checkpointing ? "checkpointing" : "classic";
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
  // Labels are bought from EasyPost's stand-in, as npm start does (tracker events are not sent:
  // the run's wait for delivery is not what is measured here).
  const easyPost = createEasyPostSandbox({ webhookSecret: easyPostWebhookSecret, logger });
  await easyPost.listen(0, "127.0.0.1");
  const profileDir = args["cpu-prof"] ? path.resolve(args["cpu-prof"]) : undefined;
  // One folder per process and run: tsx's loader thread writes a profile of its own beside the
  // main thread's (the larger file), and --cpu-prof-name cannot tell them apart.
  const profile = (name: string): string[] =>
    profileDir
      ? ["--cpu-prof", `--cpu-prof-dir=${path.join(profileDir, `${name}-${mode}-n${appProcesses}`)}`]
      : [];

  const children: Child[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < appProcesses; i++) ports.push(await freePort());
    const appUrls = ports.map((port) => `http://127.0.0.1:${port}`);
    const engine = spawnNode([
      ...profile("engine"),
      "--import",
      "tsx",
      "scripts/bench/engine-process.ts",
      JSON.stringify({
        databaseUrl,
        checkpointing,
        timeScale: 1e9,
        cronMinRealIntervalMs: cronIntervalMs,
        appReplicaOrigins: appProcesses > 1 ? appUrls : [],
      }),
    ]);
    children.push(engine);
    const ready = await engine.next();
    const engineUrl = String(ready.url);

    const appArgs = ["--import", "tsx", "--import", "./scripts/bench/app-probe.ts", "src/server.ts"];
    const apps = ports.map((port, i) => {
      const app = spawnNode([...profile(`app${i}`), ...appArgs], {
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
        PUBLIC_URL: "http://shop.test",
        EASYPOST_API_KEY: "EZTK_bench",
        EASYPOST_API_BASE: easyPost.apiBase ?? "",
        EASYPOST_WEBHOOK_SECRET: easyPostWebhookSecret,
      });
      children.push(app);
      return app;
    });
    // One after the other: each migrates the database at start (a no-op after the first).
    for (const [i, app] of apps.entries()) {
      const appUrl = appUrls[i] ?? "";
      for (let attempt = 0; ; attempt++) {
        const up = await fetch(`${appUrl}/healthz`).then(
          (res) => res.status < 500,
          () => false,
        );
        if (up) break;
        if (attempt > 600 || app.process.exitCode !== null)
          throw new Error(`the app did not start:\n${app.output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    // The engine syncs one address; with replicas it spreads the calls to it over all of them.
    await engine.ask({ type: "sync", url: `${appUrls[0]}/api/inngest` });

    const appStats = async () => {
      const answers = await Promise.all(apps.map((app) => app.ask({ type: "stats" })));
      return {
        statements: answers.reduce((sum, a) => sum + Number(a.statements), 0),
        cpuMs: answers.reduce((sum, a) => sum + Number(a.cpuMs), 0),
      };
    };
    const driverCpuMs = (): number => {
      const cpu = process.cpuUsage();
      return (cpu.user + cpu.system) / 1000;
    };
    const postgresCpuMs = (): number | undefined =>
      database.pid === undefined ? undefined : processTreeCpuMs(database.pid);

    const engineBefore = await engine.ask({ type: "stats" });
    const appBefore = await appStats();
    const driverBefore = driverCpuMs();
    const postgresBefore = postgresCpuMs();
    const machineBefore = machineCpuMs();
    const loadBefore = loadAverage();
    const started = performance.now();
    let checkoutRetries = 0;
    await pool(
      Array.from({ length: orderCount }, (_, i) => i),
      checkoutConcurrency,
      async (i) => {
        const appUrl = appUrls[i % appUrls.length] ?? "";
        // On a loaded machine the checkout transaction can outlast Prisma's timeouts: the app
        // answers 503 "retry with the same Idempotency-Key", or 409 "start a new one with a new
        // key" once that checkout gave up. The bench does as it says, as a client would.
        let res: Response;
        let key = 0;
        for (let attempt = 1; ; attempt++) {
          res = await fetch(`${appUrl}/api/checkout`, {
            method: "POST",
            headers: { "content-type": "application/json", "idempotency-key": `bench-checkout-${i}-${key}` },
            body: JSON.stringify({
              customerId: `cus_bench_${i}`,
              email: `buyer${i}@example.com`,
              items: [{ sku: "BENCH-1", quantity: 1 }],
            }),
          });
          if ((res.status !== 503 && res.status !== 409) || attempt >= 10) break;
          if (res.status === 409) key++;
          checkoutRetries++;
          await res.arrayBuffer();
          await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
        }
        if (res.status !== 201)
          throw new Error(
            `checkout answered ${res.status}: ${await res.text()}\n${apps[i % apps.length]?.output.slice(-3000)}`,
          );
        const { checkoutSessionId } = (await res.json()) as { checkoutSessionId: string };
        // Delivered here rather than by the stand-in, so each order's webhook reaches the same
        // app process as its checkout (any would do: the service is stateless).
        const completed = await sandbox.completeCheckoutSession(checkoutSessionId, "authorized", {
          deliver: false,
        });
        await deliverWebhooks(sandbox, completed.events, appUrl);
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
    const appAfter = await appStats();
    const driverAfter = driverCpuMs();
    const postgresAfter = postgresCpuMs();
    const machineAfter = machineCpuMs();
    const loadAfter = loadAverage();
    const stat = (m: Record<string, unknown>, key: string): number =>
      Number((m.stats as Record<string, number>)[key]);
    const otherRuns = await withAdmin(databaseUrl, async (c) => {
      const { rows } = await c.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM inngest_local.runs WHERE function_id NOT LIKE '%-fulfill-order'",
      );
      return rows[0]?.n ?? 0;
    });

    const figures: Figures = {
      mode,
      appProcesses,
      seconds,
      ordersPerSecond: orderCount / seconds,
      serveCalls: (stat(engineAfter, "calls") - stat(engineBefore, "calls")) / orderCount,
      checkpoints: (stat(engineAfter, "checkpoints") - stat(engineBefore, "checkpoints")) / orderCount,
      engineStatements: (stat(engineAfter, "statements") - stat(engineBefore, "statements")) / orderCount,
      appStatements: (appAfter.statements - appBefore.statements) / orderCount,
      appCpuMs: (appAfter.cpuMs - appBefore.cpuMs) / orderCount,
      engineCpuMs: (Number(engineAfter.cpuMs) - Number(engineBefore.cpuMs)) / orderCount,
      driverCpuMs: (driverAfter - driverBefore) / orderCount,
      postgresCpuMs:
        postgresBefore === undefined || postgresAfter === undefined
          ? undefined
          : (postgresAfter - postgresBefore) / orderCount,
      otherRuns,
      loadBefore,
      loadAfter,
      machineBusy:
        machineBefore && machineAfter
          ? (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)
          : undefined,
      emails: smtp.received(),
      checkoutRetries,
      engineStatementsByName: Object.entries(
        (engineAfter.stats as { statementsByName: Record<string, number> }).statementsByName,
      )
        .map(([name, count]): [string, number] => {
          const before = (engineBefore.stats as { statementsByName: Record<string, number> })
            .statementsByName[name];
          return [name, (count - (before ?? 0)) / orderCount];
        })
        .filter(([, perOrder]) => perOrder > 0)
        .sort((a, b) => b[1] - a[1]),
    };
    await engine.ask({ type: "close" }).catch(() => undefined);
    if (profileDir) {
      // --cpu-prof writes its file only on a normal exit: let the apps shut down on SIGTERM.
      await Promise.all(
        apps.map((app) => {
          const exited = new Promise((resolve) => app.process.once("exit", resolve));
          app.process.kill("SIGTERM");
          return exited;
        }),
      );
    }
    return figures;
  } finally {
    for (const child of children) if (child.process.exitCode === null) child.process.kill("SIGKILL");
    await db.$disconnect();
    await sandbox.close();
    await easyPost.close();
    await smtp.close();
    await withAdmin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`));
  }
}

async function main(): Promise<void> {
  const databaseServer = await benchDatabaseServer(args["database-url"]);
  stopDatabaseServer = databaseServer.stop;
  const runs: Figures[] = [];
  for (const mode of modes)
    for (const appProcesses of appProcessCounts)
      runs.push(await runMode(databaseServer, mode === "checkpointing", appProcesses));
  const row = (label: string, value: (f: Figures) => string) =>
    `${label.padEnd(40)}${runs.map((f) => value(f).padStart(18)).join("")}`;
  const perOrder = (value: number | undefined) => (value === undefined ? "n/a" : value.toFixed(1));
  const cores = coreCount();
  const lines = [
    `orders: ${orderCount} (one customer each, ${checkoutConcurrency} checkouts at a time), ${cores} cores, crons at most once per ${cronIntervalMs} real ms`,
    row("", (f) => f.mode),
    row("app processes", (f) => String(f.appProcesses)),
    row("all orders completed (s)", (f) => f.seconds.toFixed(2)),
    row("orders/s", (f) => f.ordersPerSecond.toFixed(1)),
    row("serve() calls / order", (f) => f.serveCalls.toFixed(1)),
    row("checkpoint POSTs / order", (f) => f.checkpoints.toFixed(1)),
    row("SQL statements / order: app", (f) => f.appStatements.toFixed(1)),
    row("SQL statements / order: engine", (f) => f.engineStatements.toFixed(1)),
    row("CPU ms / order: app", (f) => f.appCpuMs.toFixed(1)),
    row("CPU ms / order: engine", (f) => f.engineCpuMs.toFixed(1)),
    row("CPU ms / order: app + engine", (f) => (f.appCpuMs + f.engineCpuMs).toFixed(1)),
    row("CPU ms / order: PostgreSQL", (f) => perOrder(f.postgresCpuMs)),
    row("CPU ms / order: driver + stand-ins", (f) => f.driverCpuMs.toFixed(1)),
    row("other runs (crons etc.) during the run", (f) => String(f.otherRuns)),
    row("load average (1 min) start / end", (f) => `${f.loadBefore.toFixed(1)} / ${f.loadAfter.toFixed(1)}`),
    row(`machine busy (all processes, ${cores} cores)`, (f) =>
      f.machineBusy === undefined ? "n/a" : `${(f.machineBusy * 100).toFixed(0)} %`,
    ),
    row("our share of the machine's CPU", (f) => {
      const ours = (f.appCpuMs + f.engineCpuMs + f.driverCpuMs + (f.postgresCpuMs ?? 0)) * orderCount;
      return `${((ours / (f.seconds * 1000 * cores)) * 100).toFixed(0)} %`;
    }),
    row("e-mails sent", (f) => String(f.emails)),
    row("checkouts retried (503 busy, 409)", (f) => String(f.checkoutRetries)),
  ];
  lines.push("engine SQL statements / order, by statement:");
  for (const f of runs)
    lines.push(
      `  ${f.mode}, ${f.appProcesses} app process${f.appProcesses > 1 ? "es" : ""}: ${f.engineStatementsByName
        .map(([name, perOrder]) => `${name} ${perOrder.toFixed(2)}`)
        .join(", ")}`,
    );
  const defaultMode = runs.filter((f) => f.mode === "checkpointing");
  const headline = (defaultMode.length > 0 ? defaultMode : runs).reduce<(typeof runs)[number] | undefined>(
    (best, f) => (best === undefined || f.ordersPerSecond > best.ordersPerSecond ? f : best),
    undefined,
  );
  if (headline) {
    lines.push(
      `headline: ${headline.mode}, ${headline.appProcesses} app process${headline.appProcesses > 1 ? "es" : ""} (the best of the default mode)`,
    );
    lines.push(`orders/s: ${headline.ordersPerSecond.toFixed(1)}`);
  }
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
